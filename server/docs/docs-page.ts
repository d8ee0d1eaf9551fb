/**
 * GET /docs: the API reference rendered by Swagger UI from the generated OpenAPI 3.1
 * document. Swagger UI ships as a self-contained bundle (swagger-ui-dist), served from
 * node_modules, so the page works with no internet.
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import express, { type Router } from "express";

const OPENAPI_PATH = join(import.meta.dirname, "..", "..", "generated", "openapi.3.1.yaml");
const ASSETS = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Inference and fine-tuning service: API reference</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
  <div id="reference"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script>
    window.ui = SwaggerUIBundle({ url: "/docs/openapi.yaml", dom_id: "#reference", deepLinking: true, validatorUrl: null });
  </script>
</body>
</html>
`;

/** Routes of the docs page; public, outside /v1. */
export function docsRouter(): Router {
  const router = express.Router();
  router.get("/docs", (_req, res) => {
    res.type("html").send(PAGE);
  });
  router.get("/docs/openapi.yaml", (_req, res) => {
    res.type("application/yaml").sendFile(OPENAPI_PATH);
  });
  router.use("/docs/assets", express.static(ASSETS, { index: false, maxAge: "1h" }));
  return router;
}
