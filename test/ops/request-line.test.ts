/**
 * The access line is put together by hand for speed (server/log.ts `logRequest`); it must
 * stay the exact text pino writes for the same fields through `log()`, so that collectors
 * and the pretty printer see one format. Each case fails if a field's name, order, quoting
 * or omission differs.
 */
import assert from "node:assert/strict";
import { test } from "vitest";
import { log, logRequest, type RequestLine } from "../../server/log.ts";
import { captureLog } from "./log-capture.ts";

const FULL: RequestLine = {
  requestId: "req_0123456789abcdef01234567",
  operation: "createResponse",
  account: "acme",
  method: "POST",
  path: "/v1/responses",
  status: 200,
  code: undefined,
  durationMs: 12.3,
  bytesIn: 345,
  bytesOut: 6789,
  model: "tiny-chat",
  providerClass: "openai-compatible",
  inputTokens: 12,
  outputTokens: 0,
};

const CASES: [string, RequestLine][] = [
  ["a generation, every field", FULL],
  [
    "a listing: no generation fields, no code",
    {
      ...FULL,
      operation: "listModels",
      method: "GET",
      path: "/v1/models",
      model: undefined,
      providerClass: undefined,
      inputTokens: undefined,
      outputTokens: undefined,
    },
  ],
  ["an error with its code", { ...FULL, status: 404, code: "NOT_FOUND", operation: undefined, account: undefined }],
  [
    "strings that JSON must escape",
    { ...FULL, path: '/v1/"quoted"\\back\u0001slash\u00e9', model: 'a"b\\c\nd\te\u2028', account: "ünïcode ✓" },
  ],
  ["numbers: a fraction, zero, a large count", { ...FULL, durationMs: 0.1, bytesIn: 0, bytesOut: 2 ** 40 }],
];

/** The line without its time (the two are written some microseconds apart). */
const untimed = (line: string): string => line.replace(/"time":"[^"]*"/, '"time":"T"');

for (const [name, line] of CASES) {
  test(`the request line is pino's own text: ${name}`, (t) => {
    const captured = captureLog(t);
    logRequest("info", line);
    log("info", "request", { ...line });
    const [handmade, byPino] = captured.lines();
    assert.ok(handmade !== undefined && byPino !== undefined, "both lines written");
    assert.equal(untimed(handmade), untimed(byPino));
    assert.equal(JSON.parse(handmade).event, "request");
  });
}

test("the request line of a failure is written at level error, as pino writes it", (t) => {
  const captured = captureLog(t);
  const line = { ...FULL, status: 502, code: "UPSTREAM_ERROR" };
  logRequest("error", line);
  log("error", "request", { ...line });
  const [handmade, byPino] = captured.lines();
  assert.equal(untimed(handmade!), untimed(byPino!));
  assert.equal(JSON.parse(handmade!).level, "error");
});
