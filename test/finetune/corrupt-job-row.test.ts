/**
 * A stored job record is checked when it is read back, not cast: a row whose JSON lost a
 * field or holds a wrong type fails with an error naming the row and the field, and a
 * request that reads it gets the 500 INTERNAL envelope (never a stack). The row is
 * corrupted with SQL behind the store's back, on SQLite or PostgreSQL alike.
 */
import assert from "node:assert/strict";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import pg from "pg";
import { afterAll, beforeAll, describe, test } from "vitest";
import { CorruptDataError } from "../../server/checked-json.ts";
import { DATABASE_FILE } from "../../server/store/sqlite.ts";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";
import { assertError } from "../support/http.ts";
import { queuedJob } from "../store/records.ts";
import { databaseUrlFor } from "../../harness/test-store.ts";
import { call, type Caller } from "./fixtures.ts";

let server: TestServer;
let acme: Caller;

beforeAll(async () => {
  server = await startTestServer({ fineTuning: { runJobs: false } });
  acme = { server, account: "acme", key: server.keys.acme as string };
});
afterAll(() => server.close());

/** Rewrites the stored JSON of a job, as a bad migration or a hand edit might. */
async function rewriteRecord(jobId: string, change: (record: Record<string, unknown>) => unknown): Promise<void> {
  const url = await databaseUrlFor(server.dataDir);
  const select = "SELECT record FROM training_jobs WHERE account_id = 'acme' AND job_id = ";
  if (url === undefined) {
    const db = new DatabaseSync(path.join(server.dataDir, DATABASE_FILE));
    try {
      const row = db.prepare(`${select}?`).get(jobId);
      const record = JSON.parse(String(row?.record)) as Record<string, unknown>;
      const text = JSON.stringify(change(record));
      db.prepare("UPDATE training_jobs SET record = ? WHERE account_id = 'acme' AND job_id = ?").run(text, jobId);
    } finally {
      db.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(`${select}$1`, [jobId]);
    const record = JSON.parse(String(rows[0]?.record)) as Record<string, unknown>;
    const text = JSON.stringify(change(record));
    await client.query("UPDATE training_jobs SET record = $1 WHERE account_id = 'acme' AND job_id = $2", [text, jobId]);
  } finally {
    await client.end();
  }
}

/** A finished job (no runner wants it), stored through the store, then corrupted. */
async function corruptJob(change: (record: Record<string, unknown>) => unknown): Promise<string> {
  const job = queuedJob("acme", { state: "JOB_STATE_FAILED", completeTime: new Date() });
  await server.store.fineTuning.createJob(job);
  await rewriteRecord(job.jobId, change);
  return job.jobId;
}

describe("a corrupt job row", () => {
  test("a wrong type names the row and the field", async () => {
    const jobId = await corruptJob((r) => ({ ...r, config: { ...(r.config as object), epochs: "three" } }));
    await assert.rejects(server.store.fineTuning.getJob("acme", "JOB_TYPE_SFT", jobId), (error: unknown) => {
      assert.ok(error instanceof CorruptDataError, String(error));
      assert.equal(error.field, "config.epochs");
      assert.equal(error.message, `training_jobs row acme/${jobId}: config.epochs must be integer`);
      return true;
    });
  });

  test("a missing field and a state outside the contract's are named too", async () => {
    const missing = await corruptJob(({ checkpointStep: _, ...r }) => r);
    await assert.rejects(
      server.store.fineTuning.getJob("acme", "JOB_TYPE_SFT", missing),
      new RegExp(`^CorruptDataError: training_jobs row acme/${missing}: checkpointStep is missing$`),
    );
    const state = await corruptJob((r) => ({ ...r, state: "JOB_STATE_DONE" }));
    await assert.rejects(
      server.store.fineTuning.getJob("acme", "JOB_TYPE_SFT", state),
      /: state must be one of "JOB_STATE_QUEUED", .*"JOB_STATE_EXPIRED"$/,
    );
  });

  test("a request that reads it gets the 500 INTERNAL envelope, not a stack", async () => {
    const jobId = await corruptJob((r) => ({ ...r, progress: null }));
    const reply = await call(acme, "GET", `/supervisedFineTuningJobs/${jobId}`);
    assertError(reply, { status: 500, code: "INTERNAL", type: "server_error" });
    assert.doesNotMatch(reply.text, /CorruptDataError|training_jobs|\bat .*\.ts:\d+/);
    const list = await call(acme, "GET", "/supervisedFineTuningJobs");
    assertError(list, { status: 500, code: "INTERNAL", type: "server_error" });
  });
});
