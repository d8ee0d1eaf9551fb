/**
 * GET /docs: the API reference rendered by Swagger UI from the generated OpenAPI 3.1
 * document. Swagger UI ships as a self-contained bundle (swagger-ui-dist), served from
 * node_modules, so the page works with no internet.
 *
 * The document is served with its `origin` server variable defaulting to the origin the
 * request reached (scheme and Host), so "Try it out" calls the server that serves the
 * page, whatever its address and port, instead of the generated default.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import express, { type Request, type Router } from "express";
import { isScalar, parseDocument } from "yaml";

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

/** The generated document's text before and after the value of `servers[0].variables.origin.default`. */
interface OriginDefaultSlot {
  before: string;
  /** The generated default as written in the document (`http://127.0.0.1:8080`). */
  generated: string;
  after: string;
}

let slot: OriginDefaultSlot | undefined;

/** Found once, from the YAML node's source range, so the rest of the document is served byte for byte. */
function originDefaultSlot(): OriginDefaultSlot {
  if (slot) return slot;
  const text = readFileSync(OPENAPI_PATH, "utf8");
  const node = parseDocument(text).getIn(["servers", 0, "variables", "origin", "default"], true);
  if (!isScalar(node) || !node.range) throw new Error(`${OPENAPI_PATH}: no servers[0].variables.origin.default`);
  const [start, end] = node.range;
  slot = { before: text.slice(0, start), generated: text.slice(start, end), after: text.slice(end) };
  return slot;
}

/** The document with the origin variable defaulting to the origin this request reached. */
function documentFor(req: Request): string {
  const { before, generated, after } = originDefaultSlot();
  const host = req.get("host");
  // Without a Host (HTTP/1.0) there is no origin to give: the generated default stays.
  // A JSON string is a valid YAML double-quoted scalar, so an odd Host cannot break the document.
  const origin = host ? JSON.stringify(`${req.protocol}://${host}`) : generated;
  return `${before}${origin}${after}`;
}

/** Routes of the docs page; public, outside /v1. */
export function docsRouter(): Router {
  const router = express.Router();
  router.get("/docs", (_req, res) => {
    res.type("html").send(PAGE);
  });
  router.get("/docs/openapi.yaml", (req, res) => {
    res.type("application/yaml").send(documentFor(req));
  });
  router.use("/docs/assets", express.static(ASSETS, { index: false, maxAge: "1h" }));
  return router;
}
