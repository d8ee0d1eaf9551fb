/** The development seed's demo accounts behave over HTTP as dev-seed.json documents them. */
import assert from "node:assert/strict";
import { afterAll, beforeAll, describe, it } from "vitest";
import { loadDevSeed } from "../../server/store/seed.ts";
import { call, responsesBody, startAppServer } from "./harness.ts";
import { assertError } from "../support/http.ts";
import type { AppServer } from "./harness.ts";

let server: AppServer;
const key = (account: string) => `sk-dev-${account}-00000000000000000000000000000000`;
const paidCall = (account: string) =>
  call(server, "/v1/responses", { method: "POST", key: key(account), body: responsesBody() });

beforeAll(async () => {
  server = await startAppServer({ accounts: [] });
  assert.equal(await loadDevSeed(server.store), true);
});
afterAll(() => server.close());

describe("demo accounts", () => {
  it("acme and globex are ordinary, each reaching only its own account", async () => {
    assert.equal((await paidCall("acme")).status, 200);
    assert.equal((await paidCall("globex")).status, 200);
    assert.equal((await call(server, "/v1/accounts/globex/datasets", { key: key("globex") })).status, 200);
    assertError(await call(server, "/v1/accounts/globex/datasets", { key: key("acme") }), {
      status: 403,
      code: "OPERATION_NOT_ALLOWED",
      type: "permission_error",
    });
  });

  it("initech is suspended", async () => {
    assertError(await call(server, "/v1/models", { key: key("initech") }), {
      status: 403,
      code: "TENANT_SUSPENDED",
      type: "permission_error",
    });
  });

  it("umbrella has no balance", async () => {
    assertError(await paidCall("umbrella"), { status: 402, code: "INSUFFICIENT_BALANCE", type: "billing_error" });
  });

  it("vandelay's daily budget is spent", async () => {
    assertError(await paidCall("vandelay"), { status: 429, code: "TENANT_BUDGET_EXCEEDED", type: "rate_limit_error" });
  });

  it("wonka may make two requests a minute", async () => {
    await call(server, "/v1/models", { key: key("wonka") });
    await call(server, "/v1/models", { key: key("wonka") });
    assertError(await call(server, "/v1/models", { key: key("wonka") }), {
      status: 429,
      code: "TENANT_RATE_LIMITED",
      type: "rate_limit_error",
    });
  });

  it("hooli is restricted but can call", async () => {
    const hooli = await server.store.accounts.get("hooli");
    assert.deepEqual(hooli?.allowedModels, ["tiny-chat"]);
    assert.equal(hooli?.hasPaymentMethod, false);
    assert.equal(hooli?.fineTuningEnabled, false);
    assert.equal((await paidCall("hooli")).status, 200);
  });
});
