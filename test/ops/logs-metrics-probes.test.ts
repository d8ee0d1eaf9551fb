/**
 * Issue 18 over a real process (`node server/main.ts`): the access log, request ids end to
 * end, the Prometheus metrics on their own port, and the probes.
 *
 * One server, on a routing file that sends tiny-chat to a recording upstream (the local
 * model as its standby), with METRICS_PORT=0.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, beforeAll, describe, test } from "vitest";
import { skipping } from "../support/skip.ts";
import { onPostgres } from "../../harness/test-store.ts";
import { ahoyRows, readyDataset, type Caller } from "../finetune/fixtures.ts";
import type { TestServer } from "../../harness/test-server.ts";
import { REQUEST_ID } from "../support/http.ts";
import { startOpsServer, type OpsServer } from "./process.ts";
import { startRecordingUpstream, writeRouting, type RecordingUpstream } from "./recording-upstream.ts";

const scratch = mkdtempSync(path.join(os.tmpdir(), "ops-test-"));
const dataDir = path.join(scratch, "data");
let upstream: RecordingUpstream;
let server: OpsServer;

const SECRET_PROMPT = "the-secret-prompt-7f3a";
const SECRET_ROW = "the-secret-dataset-row-91c2";
const SECRET_PAGE_TOKEN = "the-secret-page-token-5d0e";
const TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

beforeAll(async () => {
  upstream = await startRecordingUpstream("short");
  const routingFile = path.join(scratch, "routing.json");
  writeRouting(routingFile, upstream);
  server = await startOpsServer(dataDir, { METRICS_PORT: "0", ROUTING_FILE: routingFile, JOB_LEASE_MS: "2000" });
});

afterAll(async () => {
  await server?.kill();
  await upstream?.close();
  rmSync(scratch, { recursive: true, force: true });
});

function respond(headers: Record<string, string> = {}, body: Record<string, unknown> = {}) {
  return fetch(`${server.baseUrl}/responses`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.keys.acme}`, "content-type": "application/json", ...headers },
    body: JSON.stringify({ model: "tiny-chat", input: SECRET_PROMPT, store: false, max_output_tokens: 8, ...body }),
  });
}

async function scrape(): Promise<string> {
  const response = await fetch(`${server.metricsOrigin}/metrics`);
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
  return response.text();
}

/** The value of one sample (`name{labels}`), 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)))
      return Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return 0;
}

describe("the access log and request ids", () => {
  test("one JSON line per request, with id, operation, account, status, latency, bytes, model, provider class and tokens", async () => {
    const response = await respond({ "x-request-id": "caller-abc-123" });
    assert.equal(response.status, 200, await response.clone().text());
    await response.text();
    const entry = await server.waitForEntry((e) => e.event === "request" && e.requestId === "caller-abc-123");
    assert.equal(entry.level, "info");
    assert.equal(entry.operation, "createResponse");
    assert.equal(entry.account, "acme");
    assert.equal(entry.method, "POST");
    assert.equal(entry.path, "/v1/responses");
    assert.equal(entry.status, 200);
    assert.equal(typeof entry.durationMs, "number");
    assert.ok((entry.bytesIn as number) > 0 && (entry.bytesOut as number) > 0, JSON.stringify(entry));
    assert.equal(entry.model, "tiny-chat");
    assert.equal(entry.providerClass, "primary");
    assert.equal(entry.inputTokens, 5);
    assert.equal(entry.outputTokens, 2);
    assert.match(String(entry.time), /^\d{4}-\d{2}-\d{2}T/);
    assert.equal(server.entries().filter((e) => e.requestId === "caller-abc-123").length, 1, "one line");
  });

  test("a well-formed x-request-id and traceparent go upstream; a malformed id is replaced by the server's own", async () => {
    upstream.headers.length = 0;
    await (await respond({ "x-request-id": "caller-xyz", traceparent: TRACEPARENT, tracestate: "vendor=abc" })).text();
    const kept = upstream.headers.at(-1)!;
    assert.equal(kept["x-request-id"], "caller-xyz");
    assert.equal(kept.traceparent, TRACEPARENT);
    assert.equal(kept.tracestate, "vendor=abc");

    const replaced = await respond({ "x-request-id": "not ok; has spaces", traceparent: "00-zz-nonsense-01" });
    await replaced.text();
    const id = replaced.headers.get("x-request-id") ?? "";
    assert.match(id, REQUEST_ID);
    const sent = upstream.headers.at(-1)!;
    assert.equal(sent["x-request-id"], id, "the server's own id goes upstream");
    assert.equal(sent.traceparent, undefined, "a malformed traceparent is not forwarded");
    await server.waitForEntry((e) => e.event === "request" && e.requestId === id);
  });

  test("an error answer's line carries its code; a 404 has no operation", async () => {
    const response = await fetch(`${server.baseUrl}/no-such-thing`, {
      headers: { authorization: `Bearer ${server.keys.acme}` },
    });
    assert.equal(response.status, 404);
    const id = response.headers.get("x-request-id");
    const entry = await server.waitForEntry((e) => e.event === "request" && e.requestId === id);
    assert.equal(entry.code, "NOT_FOUND");
    assert.equal(entry.status, 404);
    assert.equal(entry.operation, undefined);
  });

  test("no secret reaches the log: not the key, the Authorization header, a prompt, dataset rows or a query string", async () => {
    const caller: Caller = {
      server: server as unknown as TestServer,
      account: "acme",
      key: server.keys.acme as string,
    };
    const rows = ahoyRows(4).map((row, i) =>
      i === 0
        ? {
            messages: [
              { role: "user", content: SECRET_ROW },
              { role: "assistant", content: "Arr." },
            ],
          }
        : row,
    );
    await readyDataset(caller, "secrets", rows);
    await (await respond({}, { stream: true })).text();
    const wrongKey = await fetch(`${server.baseUrl}/models`, {
      headers: { authorization: "Bearer sk-not-a-real-key-4242" },
    });
    assert.equal(wrongKey.status, 401);
    const listed = await fetch(`${server.baseUrl}/accounts/acme/datasets?pageToken=${SECRET_PAGE_TOKEN}`, {
      headers: { authorization: `Bearer ${server.keys.acme}` },
    });
    await listed.text();
    await server.waitForEntry((e) => e.event === "dataset.validated");
    await server.waitForEntry((e) => e.event === "request" && e.requestId === listed.headers.get("x-request-id"));
    const log = server.lines().join("\n");
    for (const secret of [
      server.keys.acme as string,
      "sk-not-a-real-key-4242",
      "Bearer",
      SECRET_PROMPT,
      SECRET_ROW,
      SECRET_PAGE_TOKEN,
    ]) {
      assert.ok(!log.includes(secret), `the log contains ${secret}`);
    }
    // The lifecycle of the dataset is there, by name.
    assert.ok(
      server
        .entries()
        .some(
          (e) =>
            e.event === "dataset.uploaded" && String(e.version).startsWith("accounts/acme/datasets/secrets/versions/"),
        ),
    );
  });
});

describe("metrics on METRICS_PORT", () => {
  test("the counters move: requests, latency, tokens, upstream calls, fallbacks, store calls, dataset validation", async () => {
    const before = await scrape();
    upstream.mode = "short";
    await (await respond()).text();
    upstream.mode = "unavailable";
    const fellBack = await respond();
    await fellBack.text();
    assert.equal(fellBack.headers.get("x-provider-class"), "fallback");
    upstream.mode = "short";
    const after = await scrape();
    const moved = (name: string, labels: Record<string, string> = {}) =>
      sample(after, name, labels) - sample(before, name, labels);
    assert.equal(moved("http_requests_total", { operation: "createResponse", method: "POST", status: "200" }), 2);
    assert.equal(moved("http_request_duration_seconds_count", { operation: "createResponse", status: "200" }), 2);
    assert.ok(moved("inference_input_tokens_total", { model: "tiny-chat" }) >= 5);
    assert.ok(moved("inference_output_tokens_total", { model: "tiny-chat" }) >= 2);
    assert.equal(moved("upstream_requests_total", { provider: "recording", outcome: "2xx" }), 1);
    assert.equal(moved("upstream_requests_total", { provider: "recording", outcome: "5xx" }), 1);
    assert.equal(moved("inference_generations_total", { model: "tiny-chat", provider_class: "fallback" }), 1);
    assert.match(
      after,
      /^store_operation_duration_seconds_count\{operation="[a-zA-Z]+\.[a-zA-Z]+",outcome="ok"\} [1-9]/m,
    );
    assert.ok(sample(after, "dataset_validations_total", { result: "ready" }) >= 1);
    assert.ok(sample(after, "dataset_validated_bytes_total") > 0);
    assert.match(after, /^finetune_jobs\{state="JOB_STATE_QUEUED"\} 0$/m);
    assert.match(after, /^sse_streams_open 0$/m);
    assert.match(after, /^process_cpu_seconds_total /m);
  });

  test("an open stream is counted while it is open", async () => {
    upstream.mode = "endless";
    const response = await respond({}, { stream: true, max_output_tokens: 500 });
    const reader = response.body!.getReader();
    await reader.read();
    assert.equal(sample(await scrape(), "sse_streams_open"), 1);
    await reader.cancel();
    upstream.mode = "short";
    const until = Date.now() + 5_000;
    while (sample(await scrape(), "sse_streams_open") !== 0 && Date.now() < until)
      await new Promise((r) => setTimeout(r, 50));
    assert.equal(sample(await scrape(), "sse_streams_open"), 0);
  });

  test("/metrics is not on the API's port", async () => {
    const response = await fetch(`${server.origin}/metrics`);
    assert.equal(response.status, 404);
    assert.equal(((await response.json()) as { error: { code: string } }).error.code, "NOT_FOUND");
  });
});

describe("probes", () => {
  test("/healthz and /readyz answer 200 without a key, outside /v1, on the API port and the metrics port", async () => {
    for (const origin of [server.origin, server.metricsOrigin]) {
      const health = await fetch(`${origin}/healthz`);
      assert.equal(health.status, 200);
      assert.deepEqual(await health.json(), { status: "ok" });
      const ready = await fetch(`${origin}/readyz`);
      assert.equal(ready.status, 200);
      assert.deepEqual(await ready.json(), {
        status: "ready",
        checks: { store: "ok", migrations: "ok", draining: false },
      });
      assert.equal(ready.headers.get("cache-control"), "no-store");
    }
    assert.equal((await fetch(`${server.baseUrl}/healthz`)).status, 404, "not inside the versioned API");
  });

  test(
    "/readyz is 503 when the store's migrations are behind the code",
    { skip: skipping(onPostgres && "SQLite file edited in place") },
    async () => {
      const db = new DatabaseSync(path.join(dataDir, "service.db"));
      const last = db
        .prepare("SELECT version AS v, name, applied_at_ms FROM schema_migrations ORDER BY version DESC LIMIT 1")
        .get() as { v: number; name: string; applied_at_ms: number };
      db.prepare("DELETE FROM schema_migrations WHERE version = ?").run(last.v);
      try {
        const ready = await fetch(`${server.origin}/readyz`);
        assert.equal(ready.status, 503);
        const body = (await ready.json()) as { status: string; checks: { migrations: string; store: string } };
        assert.equal(body.status, "unavailable");
        assert.equal(body.checks.migrations, `pending: ${last.v}`);
        assert.equal(body.checks.store, "ok");
        assert.equal((await fetch(`${server.origin}/healthz`)).status, 200, "alive all the same");
      } finally {
        db.prepare("INSERT INTO schema_migrations (version, name, applied_at_ms) VALUES (?, ?, ?)").run(
          last.v,
          last.name,
          last.applied_at_ms,
        );
        db.close();
      }
    },
  );
});
