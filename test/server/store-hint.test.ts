/**
 * `store` missing on /responses stays refused (the interface document's rule 1), but the
 * message names the way out in the common client libraries, which leave `store` out by
 * default, and points at the README's "With other clients" table.
 */
import assert from "node:assert/strict";
import { afterAll, beforeAll, test } from "vitest";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";
import { post } from "./http.ts";
import { assertError } from "../support/http.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

for (const [what, store] of [
  ["missing", undefined],
  ["true", true],
] as const) {
  test(`store ${what} is 400 INVALID_REQUEST whose message names each library's option`, async () => {
    const result = await post(
      server.baseUrl,
      "/responses",
      { model: "tiny-chat", input: "Hi", ...(store === undefined ? {} : { store }) },
      { key: server.keys.acme },
    );
    assertError(result, { status: 400, code: "INVALID_REQUEST", type: "invalid_request_error" });
    assert.equal(result.body.error.param, "store");
    const message: string = result.body.error.message;
    for (const option of [
      'send "store": false',
      "providerOptions: { openai: { store: false } }",
      "zdrEnabled: true",
      "modelSettings: { store: false }",
      'README, "With other clients"',
    ])
      assert.ok(message.includes(option), `${option} in: ${message}`);
  });
}
