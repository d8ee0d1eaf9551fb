/**
 * Database outage: a server process on PostgreSQL serves steady traffic (reads, and paid
 * inference calls that write a charge); PostgreSQL is stopped for three seconds and started
 * again. While it is down every answer is 503 STORAGE_UNAVAILABLE with Retry-After and
 * x-request-id, fast: never a 500, never a request left hanging. Once it is back the
 * server answers 200 again by itself, without a restart.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, test } from "vitest";
import { skipping } from "../support/skip.ts";
import { freshSchemaUrl } from "../../harness/test-store.ts";
import { postgresBinDir, POSTGRES_SKIP, startCluster, type PgCluster } from "../../harness/postgres-cluster.ts";
import { createAccount, startQuietServer } from "./processes.ts";

/** A request that takes longer than this counts as a hang. */
const HANG_MS = 5_000;
const OUTAGE_MS = 3_000;

interface Outcome {
  /** When it was sent. */
  phase: "before" | "down" | "after";
  /** When its answer came. */
  answered: "before" | "down" | "after";
  status: number;
  code?: string;
  retryAfter: string | null;
  requestId: string | null;
  ms: number;
}

// This test stops the database, so it needs a cluster of its own even when TEST_DATABASE_URL is given.
const skip =
  POSTGRES_SKIP ||
  (postgresBinDir() === undefined && process.env.REQUIRE_POSTGRES !== "1"
    ? "needs the PostgreSQL binaries to stop and start a cluster"
    : false);

describe("PostgreSQL stops for a few seconds under traffic", { skip: skipping(skip), timeout: 120_000 }, () => {
  let cluster: PgCluster;
  let dataDir: string;
  let server: Awaited<ReturnType<typeof startQuietServer>>;
  let key: string;

  beforeAll(async () => {
    cluster = await startCluster();
    const url = await freshSchemaUrl(cluster.url);
    dataDir = mkdtempSync(path.join(os.tmpdir(), "outage-"));
    server = await startQuietServer({
      DATA_DIR: dataDir,
      DATABASE_URL: url,
      PG_CONNECT_TIMEOUT_MS: "1000",
      PG_STATEMENT_TIMEOUT_MS: "2000",
      JOB_POLL_MS: "200",
    });
    key = await createAccount(url, dataDir, {
      id: "steady",
      balanceMicros: 1_000_000_000,
      hasPaymentMethod: true,
      requestsPerMinute: null,
    });
  });

  afterAll(async () => {
    if (server) await server.kill();
    cluster?.destroy();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  test("503 STORAGE_UNAVAILABLE with Retry-After while it is down, never a 500 or a hang; 200 again when it is back", async () => {
    let phase: Outcome["phase"] = "before";
    const outcomes: Outcome[] = [];
    let running = true;

    const requests: (() => Promise<Response>)[] = [
      () =>
        fetch(`${server.baseUrl}/accounts/steady/datasets`, {
          headers: { authorization: `Bearer ${key}` },
          signal: AbortSignal.timeout(HANG_MS),
        }),
      () =>
        fetch(`${server.baseUrl}/responses`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ model: "tiny-chat", input: "Hello!", store: false, max_output_tokens: 4 }),
          signal: AbortSignal.timeout(HANG_MS),
        }),
    ];
    const loop = async (which: number) => {
      for (let i = which; running; i++) {
        const sent = phase;
        const started = Date.now();
        const response = await (requests[i % requests.length] as () => Promise<Response>)().catch((error: unknown) => {
          // A refused or cut connection: the server died or hung; its log says why.
          throw new Error(
            `a request failed in phase ${sent} (${String(error)}); server log:\n${server.log().slice(-8_000)}`,
            { cause: error },
          );
        }); // a timeout rejects: the test fails as a hang
        const body = (await response.json().catch(() => undefined)) as { error?: { code?: string } } | undefined;
        outcomes.push({
          phase: sent,
          answered: phase,
          status: response.status,
          code: body?.error?.code,
          retryAfter: response.headers.get("retry-after"),
          requestId: response.headers.get("x-request-id"),
          ms: Date.now() - started,
        });
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const loops = [0, 1, 2, 3].map(loop);
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    try {
      await sleep(1_000);
      phase = "down";
      cluster.stop();
      await sleep(OUTAGE_MS);
      cluster.start();
      phase = "after";
      // Recovered: the last answers of each kind are 200 again.
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline) {
        await sleep(250);
        const recent = outcomes.filter((o) => o.phase === "after").slice(-8);
        if (recent.length === 8 && recent.every((o) => o.status === 200)) break;
      }
    } finally {
      running = false;
      await Promise.all(loops);
    }

    const count = (p: Outcome["phase"], status?: number) =>
      outcomes.filter((o) => o.phase === p && (status === undefined || o.status === status)).length;
    console.log(
      `# ${outcomes.length} requests: before ${count("before")} (${count("before", 200)} × 200), ` +
        `down ${count("down")} (${count("down", 503)} × 503), after ${count("after")} (${count("after", 200)} × 200); slowest ${Math.max(...outcomes.map((o) => o.ms))} ms`,
    );
    const healthy = outcomes.filter((o) => o.answered === "before");
    assert.ok(healthy.length > 0 && healthy.every((o) => o.status === 200), "all 200 before the outage");
    for (const o of outcomes) {
      assert.ok(
        o.status === 200 || o.status === 503,
        `an answer was ${o.status} (${o.code}) in phase ${o.phase}; server log:\n${server.log().slice(-5_000)}`,
      );
      assert.ok(o.requestId, "every answer has x-request-id");
      if (o.status === 503) {
        assert.equal(o.code, "STORAGE_UNAVAILABLE");
        assert.match(o.retryAfter ?? "", /^\d+$/, "a 503 carries Retry-After");
      }
    }
    assert.ok(count("down", 503) > 0, "the outage was seen");
    const recent = outcomes.filter((o) => o.phase === "after").slice(-8);
    assert.ok(
      recent.length === 8 && recent.every((o) => o.status === 200),
      "200 again after the database came back, without a restart",
    );
  });
});
