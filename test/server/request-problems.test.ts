/**
 * A refused request names every problem the envelope can hold: `param` is the first,
 * the message says why where a rule needs saying (`store`: this service keeps no state)
 * and names the others, those the contract finds and those only the service knows (a
 * model that does not exist).
 */
import assert from "node:assert/strict";
import { afterAll, beforeAll, test } from "vitest";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";
import { post } from "./http.ts";
import { assertError, INVALID_REQUEST } from "../support/http.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ fineTuning: { runJobs: false } });
});
afterAll(() => server.close());

const call = (path: string, body: unknown) => post(server.baseUrl, path, body, { key: server.keys.acme });

test("store omitted and an unknown model: param store, the reason, and the unknown model in the message", async () => {
  const result = await call("/responses", { model: "no-such-model", input: "Hi" });
  assertError(result, INVALID_REQUEST);
  assert.equal(result.body.error.param, "store");
  const { message } = result.body.error;
  assert.match(message, /^store: is required/);
  assert.ok(message.includes('this service keeps no state: send "store": false'), message);
  assert.match(message, /model: .*no-such-model.* does not exist/);
});

test("store true says why too", async () => {
  const result = await call("/responses", { model: "tiny-chat", input: "Hi", store: true });
  assert.equal(result.body.error.param, "store");
  assert.ok(
    result.body.error.message.includes('this service keeps no state: send "store": false'),
    result.body.error.message,
  );
});

test("the other invalid fields of the same body are named after the first", async () => {
  const result = await call("/responses", {
    model: "tiny-chat",
    input: "Hi",
    temperature: 5,
    top_p: 3,
    max_output_tokens: 0,
  });
  assertError(result, INVALID_REQUEST);
  assert.equal(result.body.error.param, "store");
  const { message } = result.body.error;
  for (const field of ["temperature", "top_p", "max_output_tokens"])
    assert.match(message, new RegExp(`\\b${field}: must be`), message);
});

test("a known model is not reported; one problem alone reads as before", async () => {
  const result = await call("/responses", { model: "tiny-chat", input: "Hi" });
  assert.equal(result.body.error.param, "store");
  assert.doesNotMatch(result.body.error.message, /Also|model:/);
});

test("on other operations too: every invalid field of a job request", async () => {
  const result = await post(
    server.baseUrl,
    "/accounts/acme/supervisedFineTuningJobs:estimateCost",
    { baseModel: "tiny-chat", inputDatasetVersion: "", config: { outputModelId: "Not An Id", epochs: 0 } },
    { key: server.keys.acme },
  );
  assertError(result, INVALID_REQUEST);
  const { param, message } = result.body.error;
  const named = ["baseModel", "inputDatasetVersion", "config.outputModelId", "config.epochs"].filter((f) =>
    message.includes(`${f}: `),
  );
  assert.ok(named.includes(param), `${param} in ${message}`);
  assert.equal(named.length, 4, message);
});
