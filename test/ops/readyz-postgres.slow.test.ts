/**
 * /readyz over a real process on PostgreSQL: 200 while the database answers, 503 naming
 * the store within seconds once it stops (while /healthz stays 200: the process is alive),
 * 200 again by itself once it is back.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, test } from "vitest";
import { skipping } from "../support/skip.ts";
import { postgresBinDir, POSTGRES_SKIP, startCluster, type PgCluster } from "../../harness/postgres-cluster.ts";
import { freshSchemaUrl } from "../../harness/test-store.ts";
import { startOpsServer } from "./process.ts";

// It stops the database, so it needs a cluster of its own even when TEST_DATABASE_URL is given.
const skip =
  POSTGRES_SKIP ||
  (postgresBinDir() === undefined && process.env.REQUIRE_POSTGRES !== "1"
    ? "needs the PostgreSQL binaries to stop and start a cluster"
    : false);
const dataDir = mkdtempSync(path.join(os.tmpdir(), "ops-readyz-pg-"));
let cluster: PgCluster | undefined;
afterAll(() => {
  cluster?.destroy();
  rmSync(dataDir, { recursive: true, force: true });
});

async function readyz(
  origin: string,
): Promise<{ status: number; body: { status: string; checks: Record<string, unknown> } }> {
  const response = await fetch(`${origin}/readyz`);
  return {
    status: response.status,
    body: (await response.json()) as { status: string; checks: Record<string, unknown> },
  };
}

async function until<T>(what: () => Promise<T | undefined>, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await what();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test(
  "/readyz follows the database: 503 while it is down, 200 when it is back",
  { skip: skipping(skip), timeout: 120_000 },
  async () => {
    cluster = await startCluster();
    const url = await freshSchemaUrl(cluster.url);
    const server = await startOpsServer(dataDir, {
      DATABASE_URL: url,
      PG_CONNECT_TIMEOUT_MS: "1000",
      PG_STATEMENT_TIMEOUT_MS: "2000",
      JOB_POLL_MS: "200",
    });
    try {
      assert.deepEqual(await readyz(server.origin), {
        status: 200,
        body: { status: "ready", checks: { store: "ok", migrations: "ok", draining: false } },
      });
      cluster.stop();
      const down = await until(async () => {
        const got = await readyz(server.origin);
        return got.status === 503 ? got : undefined;
      }, 10_000);
      assert.equal(down.body.status, "unavailable");
      assert.match(String(down.body.checks.store), /^error: /);
      assert.equal((await fetch(`${server.origin}/healthz`)).status, 200, "alive all the same");
      cluster.start();
      await until(async () => ((await readyz(server.origin)).status === 200 ? true : undefined), 30_000);
    } finally {
      await server.kill();
    }
  },
);
