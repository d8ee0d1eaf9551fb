/**
 * Model listing is one of the interface document's inference endpoints, and both inference
 * headers are on "successful inference responses": GET /models and GET /models/{model}
 * carry `x-provider-class: primary` and the routing configuration's `x-config-version`
 * (docs/contract-decisions.md, Inference headers).
 */
import assert from "node:assert/strict";
import { afterAll, beforeAll, test } from "vitest";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";
import { post, responsesBody } from "./http.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({
    routing: {
      version: "models-headers-3",
      providers: { local: { type: "local" } },
      models: {},
      contentPolicy: { blockedInputTerms: [], blockedOutputTerms: [] },
    },
  });
});
afterAll(() => server.close());

const get = (path: string) =>
  fetch(`${server.baseUrl}${path}`, { headers: { authorization: `Bearer ${server.keys.acme}` } });

test("GET /models and GET /models/{model} carry x-provider-class and x-config-version, as /responses does", async () => {
  const inference = await post(server.baseUrl, "/responses", responsesBody(), { key: server.keys.acme });
  assert.equal(inference.headers.get("x-config-version"), "models-headers-3");
  for (const path of [
    "/models",
    "/models/tiny-chat",
    `/models/${encodeURIComponent("accounts/maas/models/tiny-chat")}`,
  ]) {
    const result = await get(path);
    assert.equal(result.status, 200, path);
    assert.equal(result.headers.get("x-provider-class"), "primary", path);
    assert.equal(result.headers.get("x-config-version"), "models-headers-3", path);
    assert.ok(result.headers.get("x-request-id"), path);
  }
});

test("an error of model listing is not a successful inference answer: no inference headers", async () => {
  const result = await get("/models/no-such-model");
  assert.equal(result.status, 404);
  assert.equal(result.headers.get("x-provider-class"), null);
});
