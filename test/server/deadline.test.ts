/**
 * x-request-timeout-ms bounds the whole call, local generation included (decisions:
 * 504 REQUEST_DEADLINE_EXCEEDED, or the error event once a stream has started). The
 * embedded model answers tiny-chat in 9–33 ms; none of that fits in 1 ms.
 */
import assert from "node:assert/strict";
import { afterAll, beforeAll, test } from "vitest";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";
import { parseSse, post, responsesBody } from "./http.ts";
import { assertError } from "../support/http.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const within = (ms: string) => ({ key: server.keys.acme, headers: { "x-request-timeout-ms": ms } });

test("POST /responses on the local model with x-request-timeout-ms 1 is 504 REQUEST_DEADLINE_EXCEEDED", async () => {
  assertError(await post(server.baseUrl, "/responses", responsesBody(), within("1")), {
    status: 504,
    code: "REQUEST_DEADLINE_EXCEEDED",
    type: "server_error",
  });
});

test("streamed: 504 when the deadline passed before the first event, else the error event; never a completed answer", async () => {
  for (let i = 0; i < 5; i++) {
    const result = await post(server.baseUrl, "/responses", responsesBody({ stream: true }), within("1"));
    if (result.status === 504) {
      assertError(result, { status: 504, code: "REQUEST_DEADLINE_EXCEEDED", type: "server_error" });
      continue;
    }
    // The first token came within the millisecond: the stream started, and then ran out of time.
    assert.equal(result.status, 200, result.text);
    const events = parseSse(result.text);
    assert.equal(events.at(-1)?.event, "error", result.text);
    assert.equal(events.at(-1)?.json.code, "REQUEST_DEADLINE_EXCEEDED");
    assert.ok(!events.some((e) => e.event === "response.completed"), result.text);
  }
});

test("every inference format keeps the deadline", async () => {
  const calls: [string, unknown][] = [
    ["/chat/completions", { model: "tiny-chat", messages: [{ role: "user", content: "Hi" }] }],
    ["/completions", { model: "tiny-chat", prompt: "Once upon a time", max_tokens: 16 }],
    ["/messages", { model: "tiny-chat", max_tokens: 16, messages: [{ role: "user", content: "Hi" }] }],
    ["/responses", responsesBody({ model: "tiny-reasoner", reasoning: { effort: "low" } })],
  ];
  for (const [path, body] of calls)
    assertError(await post(server.baseUrl, path, body, within("1")), {
      status: 504,
      code: "REQUEST_DEADLINE_EXCEEDED",
      type: "server_error",
    });
});

test("a generous deadline is met", async () => {
  // Room for the whole greeting at temperature 0, so the answer is complete when the deadline is not hit.
  const result = await post(
    server.baseUrl,
    "/responses",
    responsesBody({ temperature: 0, max_output_tokens: 64 }),
    within("60000"),
  );
  assert.equal(result.status, 200, result.text);
  assert.equal(result.body.status, "completed");
});
