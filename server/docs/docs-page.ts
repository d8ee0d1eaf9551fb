/**
 * GET /docs: the API reference rendered by Swagger UI from the generated OpenAPI 3.1
 * document (document.ts). Swagger UI ships as a self-contained bundle (swagger-ui-dist),
 * served from node_modules, so the page works with no internet.
 *
 * What keeps it quick: the bundle and the stylesheet are sent compressed (1.7 MB → 405 KB)
 * and cached for a year under a URL that carries the bundle's version; the document is sent
 * as JSON (no YAML parser in the browser), made once per origin and kept compressed (290 KB
 * → 24 KB), and preloaded beside the bundle; the schema list, which Swagger UI would build
 * from every component, is not shown (each operation shows its own schemas). In headless
 * Chromium the operations show 1.0–1.2 s after navigation on loopback (the browser's own
 * work: compiling the bundle, rendering) and 1.3 s over 10 Mbit/s (3.2 s uncompressed);
 * Swagger UI then keeps the page busy for about a second more, resolving the OpenAPI 3.1
 * document for the Authorize dialog.
 *
 * GET / (the address `npm start` prints) redirects here, with a small JSON index of links
 * for clients that do not follow redirects.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import express, { type Router } from "express";
import { compressedBody, type CompressedBody } from "./compressed.ts";
import { documentJsonFor, documentYamlFor } from "./document.ts";

const ASSETS = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
const VERSION = (JSON.parse(readFileSync(join(ASSETS, "package.json"), "utf8")) as { version: string }).version;
/** The files the page loads, sent compressed and cached: their URLs change with the bundle's version. */
const CACHED_ASSETS: Record<string, string> = {
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "swagger-ui.css": "text/css; charset=utf-8",
  "favicon-32x32.png": "image/png",
};
const YEAR_IMMUTABLE = "public, max-age=31536000, immutable";

const asset = (file: string): string => `/docs/assets/${file}?v=${VERSION}`;

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Inference and fine-tuning service: API reference</title>
  <link rel="icon" type="image/png" href="${asset("favicon-32x32.png")}">
  <link rel="preload" href="/docs/openapi.json" as="fetch" crossorigin="anonymous">
  <link rel="stylesheet" href="${asset("swagger-ui.css")}">
  <style>
    .try-hint { font-family: sans-serif; max-width: 1420px; margin: 12px auto 0; padding: 0 20px; color: #3b4151; }
    .try-hint code { background: #f0f0f0; padding: 1px 4px; border-radius: 3px; }
  </style>
</head>
<body>
  <p class="try-hint">To try a call: <b>Authorize</b> with an API key (with <code>npm start</code>'s development
  seed: <code>sk-dev-acme-00000000000000000000000000000000</code>, account <code>acme</code>), open an operation,
  <b>Try it out</b>, <b>Execute</b>. The request bodies are examples the server accepts.</p>
  <div id="reference"></div>
  <script src="${asset("swagger-ui-bundle.js")}"></script>
  <script>
    window.ui = SwaggerUIBundle({
      url: "/docs/openapi.json",
      dom_id: "#reference",
      deepLinking: true,
      validatorUrl: null,
      defaultModelsExpandDepth: -1,
      persistAuthorization: true,
    });
  </script>
</body>
</html>
`;

/** Routes of the docs page; public, outside /v1. */
export function docsRouter(): Router {
  const router = express.Router();
  const page = compressedBody(Buffer.from(PAGE));
  router.get("/", (_req, res) => {
    res
      .status(302)
      .location("/docs")
      .json({ docs: "/docs", api: "/v1", openapi: "/docs/openapi.json", health: "/healthz", ready: "/readyz" });
  });
  router.get("/docs", (req, res) => {
    res.type("html").setHeader("Cache-Control", "no-cache");
    return page.send(req, res);
  });
  router.get("/docs/openapi.json", (req, res) => {
    // The document changes only with the server's code: a minute of caching spares a reload's fetch.
    res.type("application/json").setHeader("Cache-Control", "public, max-age=60");
    return documentJsonFor(req).send(req, res);
  });
  router.get("/docs/openapi.yaml", (req, res) => {
    res.type("application/yaml").send(documentYamlFor(req));
  });
  const bodies = new Map<string, CompressedBody>();
  router.get("/docs/assets/:file", (req, res, next) => {
    const file = req.params.file;
    const type = Object.hasOwn(CACHED_ASSETS, file) ? CACHED_ASSETS[file] : undefined;
    if (!type) return next();
    let body = bodies.get(file);
    if (!body) bodies.set(file, (body = compressedBody(readFileSync(join(ASSETS, file)))));
    res.type(type).setHeader("Cache-Control", YEAR_IMMUTABLE);
    return body.send(req, res);
  });
  router.use("/docs/assets", express.static(ASSETS, { index: false, maxAge: "1h" }));
  return router;
}
