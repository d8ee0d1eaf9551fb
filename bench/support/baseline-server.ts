/**
 * The baselines of bench/request-path.ts and bench/gateway.ts, each a child process as the
 * server under test is (its own event loop; the load generator stays in the parent):
 *
 *  - `bare`: node:http alone. `GET /v1/models` answers the list the server answered
 *    (stringified on every request, as a server would); `POST` parses the JSON body and
 *    answers a small JSON object.
 *  - `express-validator`: express 5 with `express.json()` and express-openapi-validator as
 *    its README sets it up (`OpenApiValidator.middleware`), on the same contract document
 *    with the same options as the server, its route patterns cached (path-to-regexp
 *    compiled once, not on every request; the issue measured it that way), and the same
 *    two answers from express routes.
 *  - `bare-gateway` and `express-validator-gateway`: the same two, but `POST` first makes
 *    the call a gateway cannot avoid: a streamed chat completion from the upstream over an
 *    undici Pool (as the server's provider makes it), its events read with
 *    eventsource-parser and each parsed, the text joined into the answer. They show what
 *    the upstream call itself costs on this machine, so that the server's
 *    `POST /v1/responses` can be read against a floor that makes it too.
 *
 *   node bench/support/baseline-server.ts <kind> <models.json> [upstream base URL]
 * prints `Listening on http://127.0.0.1:<port>`.
 */
import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import { createParser } from "eventsource-parser";
import express from "express";
import { Pool } from "undici";
import type { ErrorRequestHandler, RequestHandler } from "express";
import * as OpenApiValidator from "express-openapi-validator";
import { contractValidatorOptions } from "../../server/http/validation.ts";

const [kind, modelsFile, upstreamBaseUrl] = process.argv.slice(2);
const models = JSON.parse(readFileSync(modelsFile as string, "utf8")) as unknown;
if (kind?.endsWith("-gateway") && upstreamBaseUrl === undefined)
  throw new Error(`baseline ${kind} needs the upstream's base URL`);
const upstream = kind?.endsWith("-gateway") ? new URL(`${upstreamBaseUrl}/chat/completions`) : undefined;
const pool = upstream === undefined ? undefined : new Pool(upstream.origin);

/**
 * Sends the answer to `POST`: a small object at once (no promise in between, as bare as it
 * gets), or for a gateway the same object with the upstream's text once it has answered.
 */
function answer(model: string, send: (body: Record<string, unknown>) => void): void {
  const body = { object: "response", model, status: "completed" };
  if (upstream === undefined || pool === undefined) return send(body);
  void upstreamText(upstream, pool).then((text) => send({ ...body, output_text: text }));
}

/** A streamed chat completion from the upstream, its events parsed one by one and the text joined. */
async function upstreamText(url: URL, pool: Pool): Promise<string> {
  const response = await pool.request({
    path: url.pathname,
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "m", stream: true, messages: [{ role: "user", content: "Hello!" }] }),
  });
  let text = "";
  const parser = createParser({
    onEvent(event) {
      if (event.data === "[DONE]") return;
      const chunk = JSON.parse(event.data) as { choices: { delta?: { content?: string } }[] };
      text += chunk.choices[0]?.delta?.content ?? "";
    },
  });
  for await (const part of response.body) parser.feed((part as Buffer).toString("utf8"));
  return text;
}

function bare(): http.Server {
  return http.createServer((req, res) => {
    if (req.method === "GET") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(models));
      return;
    }
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => {
      const parsed = JSON.parse(Buffer.concat(parts).toString("utf8")) as { model: string };
      answer(parsed.model, (body) =>
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body)),
      );
    });
  });
}

/** express-openapi-validator 5.6 builds every route's path-to-regexp pattern on every request; compiled once here. */
function cachePathPatterns(): void {
  const require = createRequire(createRequire(import.meta.url).resolve("express-openapi-validator"));
  const patterns = require("path-to-regexp") as {
    pathToRegexp: (path: string, options?: Record<string, unknown>) => unknown;
  };
  const compile = patterns.pathToRegexp;
  const cache = new Map<string, unknown>();
  patterns.pathToRegexp = (path, options = {}) => {
    const key = `${path}\u0000${JSON.stringify(options)}`;
    let compiled = cache.get(key);
    if (compiled === undefined) cache.set(key, (compiled = compile(path, options)));
    return compiled;
  };
}

function expressWithValidator(): http.Server {
  cachePathPatterns();
  const app = express();
  app.set("case sensitive routing", true);
  app.set("x-powered-by", false);
  app.use(express.json());
  app.use(OpenApiValidator.middleware(contractValidatorOptions(false)) as unknown as RequestHandler[]);
  app.get("/v1/models", (_req, res) => void res.json(models));
  app.post("/v1/responses", (req, res) => answer((req.body as { model: string }).model, (body) => void res.json(body)));
  const report: ErrorRequestHandler = (error, _req, res, _next) =>
    void res.status((error as { status?: number }).status ?? 500).json({ error: String(error) });
  app.use(report);
  return http.createServer(app);
}

const server = kind?.startsWith("bare")
  ? bare()
  : kind?.startsWith("express-validator")
    ? expressWithValidator()
    : undefined;
if (server === undefined) throw new Error(`unknown baseline ${kind}: bare, express-validator, or either with -gateway`);
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () =>
  console.log(`Listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`),
);
