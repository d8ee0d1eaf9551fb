/**
 * What the fuzzer found, one test each, as plain requests (raw bytes where no HTTP client
 * would send them): every one of these was a 500, a crash of the whole process, or an answer
 * without the error envelope and x-request-id.
 */
import assert from "node:assert/strict";
import { afterAll, beforeAll, describe, test } from "vitest";
import { encode as exactEncode } from "gpt-tokenizer/encoding/o200k_base";
import { decode, encode } from "../../server/inference/tokenizer.ts";
import { ahoyRows, readyDataset } from "../finetune/fixtures.ts";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";
import { REQUEST_ID } from "../support/http.ts";
import { sendRaw, type WireResult } from "../../conformance/fuzz/wire.ts";

let server: TestServer;
let key: string;

beforeAll(async () => {
  server = await startTestServer({ fineTuning: { runJobs: false } });
  key = server.keys.acme as string;
  await server.store.accounts.update("acme", { requestsPerMinute: null });
  const created = await json("POST", "/v1/accounts/acme/datasets", { datasetId: "reg", dataset: {} });
  assert.equal(created.status, 200);
});

afterAll(() => server.close());

/** One request as raw bytes; `head` is the request line and headers without the final empty line. */
async function raw(head: string, body: Buffer | string = ""): Promise<WireResult> {
  const url = new URL(server.origin);
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body);
  return sendRaw(
    { host: url.hostname, port: Number(url.port) },
    { head: Buffer.from(`${head}\r\n\r\n`, "latin1"), body: bytes, delivery: { kind: "whole" }, isHead: false },
    10_000,
  );
}

async function json(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(server.origin + path, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: text ? JSON.parse(text) : undefined };
}

/** The answer is the error envelope with this status and code, and an x-request-id. */
function assertEnvelope(result: WireResult, status: number, code: string): any {
  assert.equal(result.outcome, "response", JSON.stringify(result));
  const response = result.response!;
  const text = response.body.toString("utf8");
  assert.equal(response.status, status, text);
  assert.match(response.headers["x-request-id"] ?? "", REQUEST_ID);
  assert.match(response.headers["content-type"] ?? "", /^application\/json/);
  const body = JSON.parse(text);
  assert.equal(body.error.code, code, text);
  assert.equal(typeof body.error.message, "string");
  return body;
}

async function stillServes(): Promise<void> {
  const models = await json("GET", "/v1/models");
  assert.equal(models.status, 200);
}

describe("the base path itself", () => {
  // Was 500 INTERNAL "A request reached a handler without authentication": the handlers' router was mounted at /v1 (since 2026-11-26 there is no such router; the 404 stays).
  for (const [method, path] of [
    ["GET", "/v1"],
    ["PUT", "/v1"],
    ["OPTIONS", "/v1"],
    ["GET", "/v1?x=1"],
  ] as const) {
    test(`${method} ${path} is 404 NOT_FOUND`, async () => {
      const result = await raw(`${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}`);
      assertEnvelope(result, 404, "NOT_FOUND");
    });
  }
});

describe("query parameters", () => {
  // Was 500: express-openapi-validator split the undefined value of `?pageSize` (no `=`).
  test("a parameter without `=` reads as empty, never a 500", async () => {
    assert.equal((await json("GET", "/v1/accounts/acme/datasets?pageSize")).status, 400);
    assert.equal((await json("GET", "/v1/accounts/acme/datasets?pageToken")).status, 200);
    assert.equal((await json("GET", "/v1/accounts/acme/datasets?filter&pageToken&pageSize=5")).status, 200);
    assert.equal((await json("GET", "/v1/accounts/acme/datasets/reg?view")).status, 400);
    assert.equal((await json("GET", "/v1/accounts/acme/supervisedFineTuningJobs?pageSize")).status, 400);
  });

  // Was 500 "datatype mismatch" from SQLite: the validator's coercion let Infinity past `maximum: 200`.
  for (const value of ["Infinity", "-Infinity", "1e400"]) {
    test(`pageSize=${value} is 400 INVALID_REQUEST`, async () => {
      for (const list of ["datasets", "supervisedFineTuningJobs", "dpoJobs"]) {
        const result = await json("GET", `/v1/accounts/acme/${list}?pageSize=${value}`);
        assert.equal(result.status, 400, result.text);
        assert.equal(result.body.error.param, "pageSize");
      }
    });
  }

  test("maxPoints=Infinity is 400 INVALID_REQUEST", async () => {
    const version = await readyDataset({ server, account: "acme", key }, "reg-sft", ahoyRows(4));
    const job = await json("POST", "/v1/accounts/acme/supervisedFineTuningJobs", {
      baseModel: "accounts/maas/models/tiny-chat",
      inputDatasetVersion: version,
      config: { outputModelId: "reg-model" },
    });
    assert.equal(job.status, 201, job.text);
    const metricsPath = `/v1/accounts/acme/supervisedFineTuningJobs/${(job.body.name as string).split("/").at(-1)}/metrics`;
    for (const value of ["Infinity", "1e400"]) {
      const metrics = await json("GET", `${metricsPath}?maxPoints=${value}`);
      assert.equal(metrics.status, 400, metrics.text);
      assert.equal(metrics.body.error.param, "maxPoints");
    }
    assert.equal((await json("GET", `${metricsPath}?maxPoints=10`)).status, 200);
  });
});

describe("JSON nested thousands of levels deep", () => {
  const deepObject = (levels: number) => '{"a":'.repeat(levels) + "1" + "}".repeat(levels);
  // Was 500: RangeError (JSON.stringify of the tool's parameter schema in the tokenizer, and of a tool_use input).
  const bodies: [string, string, (deep: string) => string][] = [
    [
      "responses, a function tool's parameters",
      "/v1/responses",
      (d) =>
        `{"model":"tiny-chat","input":"hi","store":false,"max_output_tokens":4,"tools":[{"type":"function","name":"f","parameters":${d}}]}`,
    ],
    [
      "chat completions, a function's parameters",
      "/v1/chat/completions",
      (d) =>
        `{"model":"tiny-chat","messages":[{"role":"user","content":"hi"}],"max_tokens":4,"tools":[{"type":"function","function":{"name":"f","parameters":${d}}}]}`,
    ],
    [
      "messages, a tool's input_schema",
      "/v1/messages",
      (d) =>
        `{"model":"tiny-chat","max_tokens":4,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":${d}}]}`,
    ],
    [
      "messages, a tool_use input",
      "/v1/messages",
      (d) =>
        `{"model":"tiny-chat","max_tokens":4,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":${d}}]},{"role":"user","content":"go on"}]}`,
    ],
  ];
  for (const [what, path, make] of bodies) {
    test(`${what}: 10 000 levels is 400 INVALID_REQUEST`, async () => {
      const body = make(deepObject(10_000));
      const result = await raw(
        `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}`,
        body,
      );
      const envelope = assertEnvelope(result, 400, "INVALID_REQUEST");
      assert.match(envelope.error.message, /nested deeper than 128 levels/);
      await stillServes();
    });
  }

  test("the limit is 128 levels of the whole body: 128 passes, 129 does not", async () => {
    // Body (1) → tools (2) → tool (3) → parameters, itself levels−3 objects deep.
    const at = async (levels: number) =>
      json("POST", "/v1/responses", JSON.parse(bodies[0]![2](deepObject(levels - 3))));
    const deepest = await at(128);
    assert.equal(deepest.status, 200, deepest.text);
    const over = await at(129);
    assert.equal(over.status, 400, over.text);
    assert.match(over.body.error.message, /nested deeper than 128 levels/);
  });

  test("a body that is nothing but 100 000 nested arrays is 400, quickly", async () => {
    const body = "[".repeat(100_000) + "]".repeat(100_000);
    const result = await raw(
      `POST /v1/responses HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}`,
      body,
    );
    assertEnvelope(result, 400, "INVALID_REQUEST");
    assert.ok(result.elapsedMs < 5_000, `${result.elapsedMs} ms`);
  });
});

describe("one long run of a character", () => {
  // Was minutes of a blocked event loop (BPE merges are quadratic in a piece's length:
  // 256 KiB of "x" took 18 s), and a RangeError inside the tokenizer library (a 500) at 1 MiB.
  test("a megabyte of one letter in the input is answered within seconds", async () => {
    // A megabyte of spaces counts 8 195 tokens, within the embedded models' 16 384-token window: it is answered.
    const cases: [string, number][] = [
      ["x".repeat(1 << 20), 400],
      ["é".repeat(1 << 19), 400],
      ["🦀".repeat(1 << 18), 400],
      [" ".repeat(1 << 20), 200],
    ];
    for (const [text, status] of cases) {
      const started = performance.now();
      const result = await json("POST", "/v1/responses", {
        model: "tiny-chat",
        input: `hello ${text} there`,
        store: false,
        max_output_tokens: 4,
      });
      assert.equal(result.status, status, result.text.slice(0, 300));
      if (status === 400) assert.equal(result.body.error.code, "CONTEXT_LENGTH_EXCEEDED");
      assert.ok(performance.now() - started < 5_000, `${Math.round(performance.now() - started)} ms`);
    }
  });

  test("the token counter is linear in long runs, lossless, and exact for ordinary text", () => {
    const started = performance.now();
    const long = `${"ab".repeat(1 << 18)} and ${"\u{1F980}".repeat(4096)}`;
    assert.equal(decode(encode(long)), long);
    assert.ok(performance.now() - started < 2_000, `${Math.round(performance.now() - started)} ms`);
    const ordinary = "The quick brown fox jumps over the lazy dog. Äpfel, 東京, 🦀 and <|endoftext|>. ".repeat(200);
    assert.deepEqual(encode(ordinary), exactEncode(ordinary, { disallowedSpecial: new Set<string>() }));
  });
});

describe("a multipart upload cut short", () => {
  const boundary = "----reg";
  const row = `${JSON.stringify({
    messages: [
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
    ],
  })}\n`;
  const part = (disposition: string) =>
    `--${boundary}\r\nContent-Disposition: form-data; ${disposition}\r\nContent-Type: application/jsonl\r\n\r\n${row}\r\n`;
  // Was a crash of the whole server: busboy's "Unexpected end of form" on a file stream nobody listened to yet.
  const forms: [string, string][] = [
    ["inside the file part", part('name="file"; filename="a.jsonl"')],
    ["inside a part that is skipped", part('name="other"; filename="a.jsonl"')],
    ["inside a second file part", part('name="file"; filename="a.jsonl"') + part('name="file"; filename="b.jsonl"')],
  ];
  for (const [where, form] of forms) {
    test(`${where}: 400 INVALID_REQUEST and the server lives on`, async () => {
      const result = await raw(
        `POST /v1/accounts/acme/datasets/reg:upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${Buffer.byteLength(form)}`,
        form,
      );
      const envelope = assertEnvelope(result, 400, "INVALID_REQUEST");
      assert.match(envelope.error.message, /form/);
      await stillServes();
    });
  }
});

describe("requests Node's HTTP parser refuses", () => {
  // Were Node's bare `400 Bad Request` / `431` / `417` with no body and no x-request-id.
  const cases: [string, string][] = [
    ["a space in the path", `GET /v1/models/a b HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer KEY`],
    ["raw UTF-8 in the path", `GET /v1/models/\u00c3\u00bc HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer KEY`],
    [
      "a control byte in a header value",
      `GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer KEY\r\nX-Fuzz: a\u0001b`,
    ],
    ["a space in a header name", `GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer KEY\r\nX Fuzz: a`],
    [
      "a header over 16 KB",
      `GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer KEY\r\nX-Big: ${"a".repeat(20_000)}`,
    ],
    ["an unknown method", `FOO /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer KEY`],
    [
      "both Content-Length and Transfer-Encoding",
      `POST /v1/responses HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer KEY\r\nContent-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked`,
    ],
    ["no Host", `GET /v1/models HTTP/1.1\r\nAuthorization: Bearer KEY`],
  ];
  for (const [what, head] of cases) {
    test(`${what}: 400 INVALID_REQUEST with the envelope and an x-request-id`, async () => {
      const result = await raw(head.replace("KEY", key));
      assertEnvelope(result, 400, "INVALID_REQUEST");
      await stillServes();
    });
  }

  // Was a reset without an answer: the connection was closed while the client was still sending its header.
  test("a megabyte header still being sent when it is refused gets the answer", async () => {
    const url = new URL(server.origin);
    const body = '{"model":"tiny-chat"}';
    const head = `POST /v1/responses HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nX-Big: ${"a".repeat(1 << 20)}\r\n\r\n`;
    for (let i = 0; i < 3; i++) {
      const result = await sendRaw(
        { host: url.hostname, port: Number(url.port) },
        { head: Buffer.from(head), body: Buffer.from(body), delivery: { kind: "trickle", delayMs: 0 }, isHead: false },
        10_000,
      );
      assertEnvelope(result, 400, "INVALID_REQUEST");
    }
    await stillServes();
  });

  test("an HTTP/1.0 request without Host is served", async () => {
    const result = await raw(`GET /v1/models HTTP/1.0\r\nAuthorization: Bearer ${key}`);
    assert.equal(result.response?.status, 200);
  });

  test("an Expect other than 100-continue is ignored, not a bare 417", async () => {
    const result = await raw(`GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nExpect: bogus`);
    assert.equal(result.response?.status, 200);
    assert.match(result.response?.headers["x-request-id"] ?? "", REQUEST_ID);
  });

  test("a client that stops sending mid-body (FIN) gets the envelope", async () => {
    const url = new URL(server.origin);
    const body = '{"model":"tiny-chat","input":"hi","store":false}';
    const head = `POST /v1/responses HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    const result = await sendRaw(
      { host: url.hostname, port: Number(url.port) },
      { head: Buffer.from(head), body: Buffer.from(body), delivery: { kind: "halfClose", at: 0.5 }, isHead: false },
      10_000,
    );
    assertEnvelope(result, 400, "INVALID_REQUEST");
  });
});
