/**
 * The order of the first checks on every request (docs/contract-decisions.md, Errors): the key
 * (401) comes before anything about the body, so a request with no valid key is 401
 * whatever its body; a declared Content-Length over the limit is 413 at once, with
 * `Connection: close`, before the body is read. Proven over real sockets against the
 * whole server with its default 8 MiB body limit.
 */
import assert from "node:assert/strict";
import net from "node:net";
import { afterAll, beforeAll, describe, test } from "vitest";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";
import { post, responsesBody } from "./http.ts";
import { assertError, REQUEST_ID, INVALID_REQUEST } from "../support/http.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const MIB = 1024 * 1024;

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: any;
  /** Milliseconds from sending the head to having the whole answer. */
  ms: number;
  /** Whether the server closed the connection after answering. */
  closed: boolean;
}

/**
 * Sends only the head of a request that declares `declared` bytes of body, and none of
 * the body: the answer must come without it. Resolves with the answer, and whether the
 * server then closed the connection (within a second of this client ending its side);
 * rejects after `timeoutMs`.
 */
function declareOnly(
  path: string,
  declared: number,
  headers: Record<string, string>,
  timeoutMs = 5_000,
): Promise<RawAnswer> {
  const { hostname, port } = new URL(server.origin);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const started = performance.now();
    let data = Buffer.alloc(0);
    let answer: Omit<RawAnswer, "closed"> | undefined;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        new Error(
          `no complete answer within ${timeoutMs} ms (got ${JSON.stringify(data.toString("latin1").slice(0, 200))})`,
        ),
      );
    }, timeoutMs);
    const finish = (closed: boolean) => {
      if (!answer) return;
      clearTimeout(timer);
      socket.destroy();
      resolve({ ...answer, closed });
    };
    socket.on("data", (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      const end = data.indexOf("\r\n\r\n");
      if (end < 0 || answer) return;
      const [statusLine, ...lines] = data.subarray(0, end).toString("latin1").split("\r\n");
      const parsed = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]),
      );
      const length = Number(parsed["content-length"]);
      if (data.length < end + 4 + length) return;
      answer = {
        status: Number(statusLine?.split(" ")[1]),
        headers: parsed,
        body: JSON.parse(data.subarray(end + 4, end + 4 + length).toString("utf8")),
        ms: performance.now() - started,
      };
      // This client sends nothing more: once it says so, the server closes the connection
      // (it lingers for a client still sending); one still open a second later is reported.
      socket.end();
      setTimeout(() => finish(false), 1_000).unref();
    });
    socket.on("close", () => finish(true));
    socket.on("error", () => undefined);
    const head = [
      `POST ${path} HTTP/1.1`,
      `Host: ${hostname}:${port}`,
      "Content-Type: application/json",
      `Content-Length: ${declared}`,
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    ];
    socket.write(`${head.join("\r\n")}\r\n\r\n`);
  });
}

describe("the key comes before the body", () => {
  test("malformed JSON without a key is 401 INVALID_API_KEY, not 400", async () => {
    const result = await post(server.baseUrl, "/responses", '{"model": "tiny-chat",');
    assertError(result, { status: 401, code: "INVALID_API_KEY", type: "authentication_error" });
  });

  test("malformed JSON with a wrong key is 401 too", async () => {
    const result = await post(server.baseUrl, "/responses", '{"model": ', { key: "sk-not-a-key" });
    assertError(result, { status: 401, code: "INVALID_API_KEY", type: "authentication_error" });
  });

  test("a 9 MiB body without a key is 401, not 413", async () => {
    const result = await post(server.baseUrl, "/responses", responsesBody({ input: "x".repeat(9 * MIB) }));
    assertError(result, { status: 401, code: "INVALID_API_KEY", type: "authentication_error" });
  });

  test("with the key, the same bodies are 400 and 413 as before", async () => {
    assertError(
      await post(server.baseUrl, "/responses", '{"model": "tiny-chat",', { key: server.keys.acme }),
      INVALID_REQUEST,
    );
    assertError(
      await post(server.baseUrl, "/responses", responsesBody({ input: "x".repeat(9 * MIB) }), {
        key: server.keys.acme,
      }),
      { status: 413, code: "MEDIA_TOO_LARGE", type: "invalid_request_error" },
    );
  });

  test("a declared 10 MB body without a key is 401 at once, without waiting for the body", async () => {
    const answer = await declareOnly("/v1/responses", 10_000_000, {});
    assert.equal(answer.status, 401);
    assert.equal(answer.body.error.code, "INVALID_API_KEY");
    assert.match(answer.headers["x-request-id"] ?? "", REQUEST_ID);
    assert.equal(answer.headers.connection, "close", "an unread body is never drained");
    assert.ok(answer.closed, "the server closed the connection");
  });
});

describe("a declared Content-Length over the limit", () => {
  test("is 413 MEDIA_TOO_LARGE at once, with Connection: close, though no byte of the body was sent", async () => {
    const answer = await declareOnly("/v1/responses", 10_000_000, { Authorization: `Bearer ${server.keys.acme}` });
    assert.equal(answer.status, 413);
    assert.equal(answer.body.error.code, "MEDIA_TOO_LARGE");
    assert.equal(answer.body.error.type, "invalid_request_error");
    assert.match(answer.headers["x-request-id"] ?? "", REQUEST_ID);
    assert.equal(answer.headers.connection, "close");
    assert.ok(answer.closed, "the server closed the connection");
    assert.ok(answer.ms < 2_000, `answered after ${answer.ms} ms`);
  });

  test("on every JSON operation, not only /responses", async () => {
    const answer = await declareOnly("/v1/accounts/acme/datasets", 10_000_000, {
      Authorization: `Bearer ${server.keys.acme}`,
    });
    assert.equal(answer.status, 413);
    assert.equal(answer.body.error.code, "MEDIA_TOO_LARGE");
    assert.equal(answer.headers.connection, "close");
  });

  test("a declared length within the limit waits for the body (and a short one is answered once it ends)", async () => {
    await assert.rejects(
      declareOnly("/v1/responses", 1_000, { Authorization: `Bearer ${server.keys.acme}` }, 500),
      /no complete answer/,
    );
  });
});
