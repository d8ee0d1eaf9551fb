/**
 * GET /models lists the models this key can call now (docs/contract-decisions.md, Inference: Models): a
 * model whose licence the account has not accepted is not listed, and GET /models/{model}
 * of it is 403 AGREEMENT_REQUIRED, so the user learns what to do. The development seed:
 * acme has accepted tiny-chat-community's licence, globex has not.
 */
import assert from "node:assert/strict";
import { afterAll, beforeAll, test } from "vitest";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";
import { assertError, reply } from "../support/http.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ fineTuning: { runJobs: false } });
});
afterAll(() => server.close());

const get = async (path: string, account: string) =>
  reply(await fetch(`${server.baseUrl}${path}`, { headers: { authorization: `Bearer ${server.keys[account]}` } }));
const ids = async (account: string) => ((await get("/models", account)).body.data as { id: string }[]).map((m) => m.id);

test("an account that has not accepted a model's licence does not see it listed", async () => {
  const listed = await ids("globex");
  assert.ok(listed.includes("tiny-chat"), listed.join(", "));
  assert.ok(!listed.includes("tiny-chat-community"), listed.join(", "));
});

test("an account that has accepted it does", async () => {
  assert.ok((await ids("acme")).includes("tiny-chat-community"));
});

test("GET /models/{model} of it is 403 AGREEMENT_REQUIRED, by slug and by full name", async () => {
  for (const name of ["tiny-chat-community", encodeURIComponent("accounts/maas/models/tiny-chat-community")]) {
    const result = await get(`/models/${name}`, "globex");
    assertError(result, { status: 403, code: "AGREEMENT_REQUIRED", type: "permission_error" });
    assert.match(result.body.error.message, /community-license-2026-01/);
  }
  assert.equal((await get("/models/tiny-chat-community", "acme")).status, 200);
});

test("every model listed can be read one by one; unknown ones stay 404", async () => {
  for (const account of ["acme", "globex", "hooli"]) {
    for (const id of await ids(account))
      assert.equal((await get(`/models/${encodeURIComponent(id)}`, account)).status, 200, `${account}: ${id}`);
  }
  assertError(await get("/models/no-such-model", "globex"), {
    status: 404,
    code: "MODEL_NOT_FOUND",
    type: "not_found_error",
  });
});
