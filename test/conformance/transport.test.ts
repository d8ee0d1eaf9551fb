/**
 * A request of the kit that gets no answer is a TransportError whose message says what
 * happened in words (the socket's message, or which time limit ran out) and whose cause is
 * fetch's own error, for whoever needs more than the words.
 */
import assert from "node:assert/strict";
import http from "node:http";
import { afterAll, beforeAll, describe, test } from "vitest";
import { send, TransportError, type PreparedRequest } from "../../conformance/http.ts";
import { freePort, listenLocally, type Listening } from "../../harness/listen.ts";

const hanging = http.createServer(() => {}); // takes the request, never answers
let listening: Listening;
let hangingUrl: string;
beforeAll(async () => {
  listening = await listenLocally(hanging);
  hangingUrl = `${listening.origin}/v1/models`;
});
afterAll(() => listening.close());

const get = (url: string): PreparedRequest => ({
  method: "GET",
  url,
  relativePath: "/models",
  apiPath: "/models",
  headers: {},
});

describe("the kit's transport failures", () => {
  test("a refused connection names the socket's failure and keeps fetch's error as cause", async () => {
    const url = `http://127.0.0.1:${await freePort()}/v1/models`;
    const error = await send(get(url), 5_000).catch((e: unknown) => e);
    assert.ok(error instanceof TransportError, String(error));
    assert.match(
      error.message,
      new RegExp(`^GET ${url.replaceAll(".", "\\.")}: fetch failed \\(connect ECONNREFUSED `),
    );
    assert.ok(error.cause instanceof TypeError);
  });

  test("no answer within the request timeout says so", async () => {
    const error = await send(get(hangingUrl), 300).catch((e: unknown) => e);
    assert.ok(error instanceof TransportError, String(error));
    assert.equal(error.message, `GET ${hangingUrl}: no complete answer within the request timeout`);
    assert.equal((error.cause as Error).name, "TimeoutError");
  });
});
