/**
 * Request validation against the contract: every failure is the 400 envelope with
 * `param` naming the field as a path, never express's HTML and never a 500.
 */
import assert from "node:assert/strict";
import { afterAll, beforeAll, describe, it } from "vitest";
import { paramOf } from "../../server/http/validation.ts";
import { call, responsesBody, startAppServer } from "./harness.ts";
import { assertError } from "../support/http.ts";
import type { AppServer } from "./harness.ts";

let server: AppServer;
let key: string;

beforeAll(async () => {
  server = await startAppServer();
  key = server.keys.acme!;
});
afterAll(() => server.close());

function postResponses(body: unknown) {
  return call(server, "/v1/responses", { key, method: "POST", body });
}

const invalid = { status: 400, code: "INVALID_REQUEST", type: "invalid_request_error" };

describe("the store rule (rule 1)", () => {
  it("store absent is 400 with param store", async () => {
    const { store: _, ...body } = responsesBody();
    assertError(await postResponses(body), { ...invalid, param: "store" });
  });

  it("store true is 400 with param store", async () => {
    assertError(await postResponses(responsesBody({ store: true })), { ...invalid, param: "store" });
  });

  it("store false passes", async () => {
    assert.equal((await postResponses(responsesBody())).status, 200);
  });
});

describe("previous_response_id (rule 2)", () => {
  for (const value of ["resp_1", null, 5]) {
    it(`sent as ${JSON.stringify(value)} is 400 with param previous_response_id`, async () => {
      assertError(await postResponses(responsesBody({ previous_response_id: value })), {
        ...invalid,
        param: "previous_response_id",
      });
    });
  }
});

describe("param names the failing field as a path", () => {
  it("a nested array item: input[2].content", async () => {
    const input = [
      { role: "user", content: "a" },
      { role: "assistant", content: "b" },
      { role: "user", content: 7 },
    ];
    assertError(await postResponses(responsesBody({ input })), { ...invalid, param: "input[2].content" });
  });

  it("an out-of-range number: temperature", async () => {
    assertError(await postResponses(responsesBody({ temperature: 3 })), { ...invalid, param: "temperature" });
  });

  it("a missing required field: model", async () => {
    const { model: _, ...body } = responsesBody();
    assertError(await postResponses(body), { ...invalid, param: "model" });
  });

  it("a query parameter: pageSize", async () => {
    assertError(await call(server, "/v1/accounts/acme/datasets?pageSize=0", { key }), {
      ...invalid,
      param: "pageSize",
    });
  });

  it("a header parameter: x-request-timeout-ms", async () => {
    const result = await call(server, "/v1/responses", {
      key,
      method: "POST",
      body: responsesBody(),
      headers: { "x-request-timeout-ms": "0" },
    });
    assertError(result, { ...invalid, param: "x-request-timeout-ms" });
  });

  it("a path parameter: a dataset id longer than 64 characters", async () => {
    assertError(await call(server, `/v1/accounts/acme/datasets/${"d".repeat(65)}`, { key }), {
      ...invalid,
      param: "dataset",
    });
  });

  it("the pointer to path conversion", () => {
    assert.equal(paramOf("/body/input/2/content"), "input[2].content");
    assert.equal(paramOf("/body/config/epochs"), "config.epochs");
    assert.equal(paramOf("/query/pageSize"), "pageSize");
    assert.equal(paramOf("/headers/x-request-timeout-ms"), "x-request-timeout-ms");
    assert.equal(paramOf("/params/account"), "account");
    assert.equal(paramOf("/body/a~1b"), "a/b");
    assert.equal(paramOf("/body"), null);
  });
});

describe("open requests", () => {
  it("unknown body fields are ignored", async () => {
    assert.equal((await postResponses(responsesBody({ some_future_field: { x: 1 } }))).status, 200);
  });

  it("unknown query parameters are ignored", async () => {
    assert.equal((await call(server, "/v1/accounts/acme/datasets?futureParam=1", { key })).status, 200);
  });
});

describe("no 500 on bad input", () => {
  const bodies: [string, string, string][] = [
    ["an array body", "[]", "application/json"],
    ["null", "null", "application/json"],
    ["deeply nested junk", JSON.stringify({ input: [[[[{}]]]], store: false, model: "m" }), "application/json"],
    ["a wrong charset", "{}", "application/json; charset=latin-9"],
    ["form data", "a=1", "application/x-www-form-urlencoded"],
    ["multipart without a file", "--x\r\n\r\n--x--\r\n", "multipart/form-data; boundary=x"],
  ];
  for (const [name, body, type] of bodies) {
    it(`${name} is a 4xx envelope`, async () => {
      const result = await call(server, "/v1/responses", {
        key,
        method: "POST",
        body,
        headers: { "content-type": type },
      });
      assert.ok(result.status >= 400 && result.status < 500, `${result.status} ${result.text}`);
      assert.equal(result.body?.error?.code, "INVALID_REQUEST", result.text);
    });
  }

  it("a path parameter that is not valid %-encoding is a 4xx envelope", async () => {
    const result = await call(server, "/v1/models/%E0%A4%A", { key });
    assert.ok(result.status >= 400 && result.status < 500, `${result.status} ${result.text}`);
    assert.equal(typeof result.body?.error?.code, "string");
  });
});
