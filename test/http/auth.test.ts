/**
 * Authentication and tenant checks over real HTTP: keys, suspended tenants, the path
 * account, requests per minute, balance and budget.
 */
import assert from "node:assert/strict";
import { Client } from "undici";
import { afterAll, beforeAll, describe, it } from "vitest";
import { budgetPeriod } from "../../server/http/tenant-limits.ts";
import { issueApiKey } from "../../server/store/api-keys.ts";
import { call, responsesBody, startAppServer } from "./harness.ts";
import { assertError } from "../support/http.ts";
import type { AppServer } from "./harness.ts";

let server: AppServer;

const unauthenticated = { status: 401, code: "INVALID_API_KEY", type: "authentication_error" };

beforeAll(async () => {
  server = await startAppServer({
    accounts: [
      { id: "acme", balanceMicros: 100_000_000, hasPaymentMethod: true },
      { id: "globex", balanceMicros: 100_000_000, hasPaymentMethod: true },
      { id: "initech", balanceMicros: 100_000_000, suspended: true },
      { id: "umbrella", balanceMicros: 0 },
      { id: "overdrawn", balanceMicros: -5 },
      { id: "wonka", balanceMicros: 100_000_000, requestsPerMinute: 2 },
      { id: "vandelay", balanceMicros: 100_000_000, budgetMicros: 1_000_000 },
      { id: "unlimited", balanceMicros: 100_000_000, requestsPerMinute: null },
    ],
  });
});
afterAll(() => server.close());

describe("API keys", () => {
  it("a valid Bearer key reaches the handler, which sees the caller", async () => {
    const result = await call(server, "/v1/models/tiny-chat", { key: server.keys.acme });
    assert.equal(result.status, 200);
    assert.equal(result.body.caller, "acme");
    assert.equal(result.body.key, server.keyIds.acme);
  });

  it("no key is 401 INVALID_API_KEY", async () => {
    assertError(await call(server, "/v1/models"), { ...unauthenticated, param: null });
  });

  it("an unknown key is 401 INVALID_API_KEY", async () => {
    assertError(await call(server, "/v1/models", { key: "sk-acme-not-a-real-key" }), unauthenticated);
  });

  it("an Authorization header that is not Bearer is 401", async () => {
    const result = await call(server, "/v1/models", { headers: { authorization: `Basic ${server.keys.acme}` } });
    assertError(result, unauthenticated);
  });

  it("a revoked key is 401", async () => {
    const { secret, key } = await issueApiKey(server.store, "acme");
    assert.equal((await call(server, "/v1/models", { key: secret })).status, 200);
    await server.store.apiKeys.revoke(key.id);
    assertError(await call(server, "/v1/models", { key: secret }), unauthenticated);
  });

  it("the key is checked before the body is validated", async () => {
    assertError(await call(server, "/v1/responses", { method: "POST", body: {} }), unauthenticated);
  });
});

describe("API keys on one keep-alive connection", () => {
  // The server keeps the hash of the last key each connection sent (auth.ts): a connection
  // that changes keys, or whose key is revoked, must still be answered for the key it sends now.
  async function callerOn(client: Client, secret: string): Promise<{ status: number; caller?: string }> {
    const { statusCode, body } = await client.request({
      path: "/v1/models/tiny-chat",
      method: "GET",
      headers: { authorization: `Bearer ${secret}` },
    });
    const json = (await body.json()) as { caller?: string };
    return { status: statusCode, caller: json.caller };
  }

  it("answers each request for the key it sends, and sees a revocation at once", async () => {
    const client = new Client(server.baseUrl, { pipelining: 1 });
    try {
      const { secret, key } = await issueApiKey(server.store, "acme");
      assert.deepEqual(await callerOn(client, secret), { status: 200, caller: "acme" });
      assert.deepEqual(await callerOn(client, server.keys.globex!), { status: 200, caller: "globex" });
      assert.deepEqual(await callerOn(client, secret), { status: 200, caller: "acme" });
      assert.equal((await callerOn(client, `${secret}0`)).status, 401);
      await server.store.apiKeys.revoke(key.id);
      assert.equal((await callerOn(client, secret)).status, 401);
      assert.deepEqual(await callerOn(client, server.keys.acme!), { status: 200, caller: "acme" });
    } finally {
      await client.close();
    }
  });
});

describe("x-api-key", () => {
  const message = { model: "tiny-chat", max_tokens: 16, messages: [{ role: "user", content: "hi" }] };

  it("is accepted on POST /v1/messages", async () => {
    const result = await call(server, "/v1/messages", {
      method: "POST",
      headers: { "x-api-key": server.keys.acme! },
      body: message,
    });
    // The test handler answers MODEL_NOT_FOUND: authentication passed.
    assertError(result, { status: 404, code: "MODEL_NOT_FOUND", type: "not_found_error" });
  });

  it("with a wrong key on /v1/messages is 401", async () => {
    const result = await call(server, "/v1/messages", {
      method: "POST",
      headers: { "x-api-key": "sk-wrong-key-000000" },
      body: message,
    });
    assertError(result, unauthenticated);
    assert.equal(result.body.type, "error");
  });

  it("is not accepted anywhere else", async () => {
    assertError(await call(server, "/v1/models", { headers: { "x-api-key": server.keys.acme! } }), unauthenticated);
    const responses = await call(server, "/v1/responses", {
      method: "POST",
      headers: { "x-api-key": server.keys.acme! },
      body: responsesBody(),
    });
    assertError(responses, unauthenticated);
  });

  it("Bearer works on /v1/messages too", async () => {
    const result = await call(server, "/v1/messages", { method: "POST", key: server.keys.acme, body: message });
    assert.equal(result.status, 404);
  });
});

describe("tenants", () => {
  it("a suspended account is 403 TENANT_SUSPENDED", async () => {
    assertError(await call(server, "/v1/models", { key: server.keys.initech }), {
      status: 403,
      code: "TENANT_SUSPENDED",
      type: "permission_error",
    });
  });

  it("another account in the path is 403 OPERATION_NOT_ALLOWED", async () => {
    const result = await call(server, "/v1/accounts/globex/datasets", { key: server.keys.acme });
    assertError(result, { status: 403, code: "OPERATION_NOT_ALLOWED", type: "permission_error", param: "account" });
  });

  it("an account that does not exist in the path is the same 403", async () => {
    const result = await call(server, "/v1/accounts/no-such-account/datasets", { key: server.keys.acme });
    assertError(result, { status: 403, code: "OPERATION_NOT_ALLOWED", type: "permission_error" });
  });

  it("the key's own account in the path passes", async () => {
    assert.equal((await call(server, "/v1/accounts/acme/datasets", { key: server.keys.acme })).status, 200);
  });
});

describe("balance", () => {
  it("a paid call with a zero balance is 402 INSUFFICIENT_BALANCE", async () => {
    const result = await call(server, "/v1/responses", {
      method: "POST",
      key: server.keys.umbrella,
      body: responsesBody(),
    });
    assertError(result, { status: 402, code: "INSUFFICIENT_BALANCE", type: "billing_error" });
  });

  it("a paid call with a negative balance is 402 too", async () => {
    const result = await call(server, "/v1/responses", {
      method: "POST",
      key: server.keys.overdrawn,
      body: responsesBody(),
    });
    assertError(result, { status: 402, code: "INSUFFICIENT_BALANCE", type: "billing_error" });
  });

  it("a free call with a zero balance passes", async () => {
    assert.equal((await call(server, "/v1/models", { key: server.keys.umbrella })).status, 200);
  });
});

describe("requests per minute", () => {
  it("past the limit is 429 TENANT_RATE_LIMITED with Retry-After until the window frees", async () => {
    const key = server.keys.wonka;
    assert.equal((await call(server, "/v1/models", { key })).status, 200);
    assert.equal((await call(server, "/v1/models", { key })).status, 200);
    const limited = await call(server, "/v1/models", { key });
    assertError(limited, { status: 429, code: "TENANT_RATE_LIMITED", type: "rate_limit_error" });
    const retryAfter = Number(limited.headers.get("retry-after"));
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
  });

  it("counts per account: another account is not limited", async () => {
    assert.equal((await call(server, "/v1/models", { key: server.keys.acme })).status, 200);
  });

  it("no limit set means no limit", async () => {
    for (let i = 0; i < 5; i++)
      assert.equal((await call(server, "/v1/models", { key: server.keys.unlimited })).status, 200);
  });
});

describe("budget", () => {
  it("a paid call once the day's spend reached the budget is 429 TENANT_BUDGET_EXCEEDED with Retry-After until the day ends", async () => {
    const key = server.keys.vandelay;
    assert.equal((await call(server, "/v1/responses", { method: "POST", key, body: responsesBody() })).status, 200);
    await server.store.usage.charge({
      accountId: "vandelay",
      keyId: null,
      kind: "inference",
      amountMicros: 1_000_000,
      at: new Date(),
    });
    const before = Date.now();
    const result = await call(server, "/v1/responses", { method: "POST", key, body: responsesBody() });
    assertError(result, { status: 429, code: "TENANT_BUDGET_EXCEEDED", type: "rate_limit_error" });
    const retryAfter = Number(result.headers.get("retry-after"));
    const untilMidnight = Math.ceil((budgetPeriod(new Date(before)).end.getTime() - before) / 1000);
    assert.ok(Math.abs(retryAfter - untilMidnight) <= 2, `Retry-After ${retryAfter}, expected about ${untilMidnight}`);
  });

  it("free calls go on once the budget is spent", async () => {
    assert.equal((await call(server, "/v1/models", { key: server.keys.vandelay })).status, 200);
  });
});
