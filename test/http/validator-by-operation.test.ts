/**
 * The validator entered through the operation lookup (validator-by-operation.ts) must do
 * exactly what express-openapi-validator's own middleware does with the same options: the
 * same requests accepted (with the same parameters, query and body handed on), the same
 * refused with the same error and the same failures listed, the same responses refused.
 * Each request below goes to two servers that differ only in that layer.
 */
import assert from "node:assert/strict";
import { once } from "node:events";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, it } from "vitest";
import express from "express";
import type { ErrorRequestHandler, RequestHandler } from "express";
import * as OpenApiValidator from "express-openapi-validator";
import { OperationTable, matchOperation } from "../../server/http/operations.ts";
import { contractValidatorOptions } from "../../server/http/validation.ts";
import { validatorByOperation } from "../../server/http/validator-by-operation.ts";

interface Case {
  method: string;
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
}

const REQUESTS: Case[] = [
  { method: "GET", path: "/v1/models" },
  { method: "GET", path: "/v1/models/" },
  { method: "GET", path: "/v1/models/tiny-chat" },
  { method: "GET", path: "/v1/models/accounts%2Facme%2Fmodels%2Fm" },
  { method: "GET", path: "/v1/models/%zz" },
  { method: "DELETE", path: "/v1/models" },
  { method: "GET", path: "/v1/nope" },
  { method: "GET", path: "/v1/Models" },
  { method: "GET", path: "/elsewhere" },
  { method: "POST", path: "/v1/responses", body: { model: "tiny-chat", input: "Hello", store: false } },
  { method: "POST", path: "/v1/responses", body: { model: "tiny-chat", input: "Hello", temperature: 5, store: false } },
  { method: "POST", path: "/v1/responses", body: { input: 3 } },
  {
    method: "POST",
    path: "/v1/responses",
    body: { model: "tiny-chat", input: [{ role: "user", content: [{ type: "input_text" }] }] },
  },
  { method: "POST", path: "/v1/responses", body: "just text", headers: { "content-type": "text/plain" } },
  { method: "POST", path: "/v1/responses" },
  {
    method: "POST",
    path: "/v1/chat/completions",
    body: { model: "tiny-chat", messages: [{ role: "user", content: "Hi" }], max_tokens: 4 },
  },
  { method: "POST", path: "/v1/chat/completions", body: { model: "tiny-chat", messages: "Hi" } },
  {
    method: "POST",
    path: "/v1/messages",
    body: { model: "tiny-chat", max_tokens: 8, messages: [{ role: "user", content: "Hi" }] },
    headers: { "x-api-key": "k" },
  },
  { method: "GET", path: "/v1/accounts/acme/datasets?pageSize=5&filter=state:READY" },
  { method: "GET", path: "/v1/accounts/acme/datasets?pageSize=abc" },
  { method: "GET", path: "/v1/accounts/acme/datasets?pageSize=0&unknown=1" },
  { method: "GET", path: "/v1/accounts/acme/datasets/d1?view=DATASET_VIEW_FULL" },
  { method: "GET", path: "/v1/accounts/acme/datasets/d1?view=NOPE" },
  {
    method: "POST",
    path: "/v1/accounts/acme/datasets/d1:upload",
    body: "{}\n",
    headers: { "content-type": "application/jsonl" },
  },
  { method: "POST", path: "/v1/accounts/acme/dpoJobs/j1:cancel" },
  { method: "POST", path: "/v1/accounts/acme/dpoJobs:estimateCost", body: {} },
  {
    method: "POST",
    path: "/v1/accounts/acme/supervisedFineTuningJobs",
    body: { dataset: "accounts/acme/datasets/d1", baseModel: "tiny-chat", epochs: "two" },
  },
  { method: "GET", path: "/v1/accounts/acme/supervisedFineTuningJobs/j1/metrics" },
  { method: "DELETE", path: "/v1/accounts/acme/datasets/d1" },
  { method: "PATCH", path: "/v1/accounts/acme/datasets/d1" },
];

/** The layers around the validator that the server has too: the operation lookup before it, JSON bodies. */
function app(validator: RequestHandler | RequestHandler[], answer: RequestHandler): express.Express {
  const server = express();
  server.set("case sensitive routing", true);
  server.use(matchOperation(new OperationTable()));
  server.use(express.json());
  server.use(validator);
  server.use(answer);
  const report: ErrorRequestHandler = (error, _req, res, _next) => {
    const e = error as { status?: number; message?: string; errors?: unknown; headers?: unknown };
    res
      .status(e.status ?? 500)
      .json({ error: error.constructor.name, message: e.message, errors: e.errors, headers: e.headers });
  };
  server.use(report);
  return server;
}

/** What the handler saw: the validator may coerce and fill in parameters, the query and the body. */
const echo: RequestHandler = (req, res) => {
  const openapi = (req as { openapi?: { expressRoute: string; openApiRoute: string; pathParams: unknown } }).openapi;
  res.status(299).json({
    params: req.params,
    query: req.query,
    body: req.body,
    openapi: openapi && {
      expressRoute: openapi.expressRoute,
      openApiRoute: openapi.openApiRoute,
      pathParams: openapi.pathParams,
    },
  });
};

/** A list of models, broken when asked: response validation must refuse the same bodies. */
const models: RequestHandler = (req, res) => {
  const model = { id: "tiny-chat", object: "model", created: 0, owned_by: "platform" };
  res
    .status(200)
    .json(
      req.query.broken === undefined
        ? { object: "list", data: [model] }
        : { object: "list", data: [{ ...model, created: "yesterday" }] },
    );
};

async function listen(server: express.Express): Promise<{ url: string; server: Server }> {
  const http = server.listen(0, "127.0.0.1");
  await once(http, "listening");
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`, server: http };
}

async function send(base: string, c: Case): Promise<{ status: number; body: unknown }> {
  const json = c.body !== undefined && typeof c.body !== "string";
  const response = await fetch(`${base}${c.path}`, {
    method: c.method,
    headers: { ...(json ? { "content-type": "application/json" } : {}), ...c.headers },
    ...(c.body !== undefined ? { body: json ? JSON.stringify(c.body) : (c.body as string) } : {}),
  });
  const text = await response.text();
  return { status: response.status, body: text === "" ? "" : JSON.parse(text) };
}

describe("the validator entered through the operation lookup", () => {
  const servers: Server[] = [];
  const urls: Record<string, string> = {};

  beforeAll(async () => {
    const pairs = {
      stockRequests: app(
        OpenApiValidator.middleware(contractValidatorOptions(false)) as unknown as RequestHandler[],
        echo,
      ),
      oursRequests: app(validatorByOperation(contractValidatorOptions(false)), echo),
      stockResponses: app(
        OpenApiValidator.middleware(contractValidatorOptions(true)) as unknown as RequestHandler[],
        models,
      ),
      oursResponses: app(validatorByOperation(contractValidatorOptions(true)), models),
    };
    for (const [name, server] of Object.entries(pairs)) {
      const started = await listen(server);
      servers.push(started.server);
      urls[name] = started.url;
    }
  });

  afterAll(() => {
    for (const server of servers) server.close();
  });

  it("accepts and refuses every request as the validator's own middleware does, with the same failures", async () => {
    const statuses = new Set<number>();
    for (const c of REQUESTS) {
      const stock = await send(urls.stockRequests as string, c);
      const ours = await send(urls.oursRequests as string, c);
      assert.deepEqual(ours, stock, `${c.method} ${c.path}`);
      statuses.add(stock.status);
    }
    // The corpus reaches every outcome: handed on, refused (400), no path (404), no method (405), wrong media type (415).
    assert.deepEqual([...statuses].sort(), [299, 400, 404, 405, 415]);
  });

  it("refuses the same response bodies, and lets the same ones through", async () => {
    for (const c of [
      { method: "GET", path: "/v1/models" },
      { method: "GET", path: "/v1/models?broken" },
    ]) {
      const stock = await send(urls.stockResponses as string, c);
      const ours = await send(urls.oursResponses as string, c);
      assert.deepEqual(ours, stock, `${c.method} ${c.path}`);
    }
    assert.equal((await send(urls.oursResponses as string, { method: "GET", path: "/v1/models?broken" })).status, 500);
    assert.equal((await send(urls.oursResponses as string, { method: "GET", path: "/v1/models" })).status, 200);
  });
});
