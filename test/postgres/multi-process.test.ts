/**
 * Scale-out, for real: two server processes (RUN_JOBS=0) and two training workers on one
 * PostgreSQL and one DATA_DIR, over loopback.
 * - 200 job creations at once, spread over both servers, with 50 Idempotency-Keys shared
 *   between them: exactly 50 jobs, every answer for a key names the same job;
 * - every job is claimed once, trained once and charged once, by one of the two workers;
 * - a cancel sent to a server reaches the worker training the job within a step or so;
 * - a worker killed with SIGKILL mid-training: once its lease runs out the other worker
 *   resumes the job from its checkpoint, and it succeeds once.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, test } from "vitest";
import { skipping } from "../support/skip.ts";
import { ahoyRows, call, createSftJob, readyDataset, waitFor, type Caller } from "../finetune/fixtures.ts";
import type { TestServer } from "../../harness/test-server.ts";
import { kill, startChild } from "../server/child-process.ts";
import { POSTGRES_SKIP } from "../../harness/postgres-cluster.ts";
import { createAccount, sql, startWorker, testDatabase, type WorkerProcess } from "./processes.ts";

const LEASE_MS = "2000";

describe("two servers and two workers on one PostgreSQL", { skip: skipping(POSTGRES_SKIP), timeout: 300_000 }, () => {
  let db: Awaited<ReturnType<typeof testDatabase>>;
  let dataDir: string;
  let servers: Awaited<ReturnType<typeof startChild>>[] = [];
  let workers: WorkerProcess[] = [];
  let key: string;
  let data: string;

  const caller = (i: number): Caller => ({
    server: { baseUrl: servers[i % 2]?.baseUrl } as TestServer,
    account: "multi",
    key,
  });
  const workerEnv = () => ({ DATABASE_URL: db.url, DATA_DIR: dataDir, JOB_POLL_MS: "100", JOB_LEASE_MS: LEASE_MS });
  const events = () => workers.flatMap((w) => w.events);
  const jobsState = async () =>
    Object.fromEntries(
      (
        await sql(
          db.url,
          "SELECT state, COUNT(*)::int AS n FROM training_jobs WHERE account_id = 'multi' GROUP BY state",
        )
      ).map((r) => [r.state, r.n]),
    );

  beforeAll(async () => {
    db = await testDatabase();
    dataDir = mkdtempSync(path.join(os.tmpdir(), "multi-process-"));
    const serverEnv = { DATABASE_URL: db.url, RUN_JOBS: "0", JOB_LEASE_MS: LEASE_MS };
    // Started together: both migrate and both try to load the development seed at once.
    servers = await Promise.all([startChild(dataDir, serverEnv), startChild(dataDir, serverEnv)]);
    workers = await Promise.all([startWorker(workerEnv()), startWorker(workerEnv())]);
    key = await createAccount(db.url, dataDir, {
      id: "multi",
      balanceMicros: 1_000_000_000,
      hasPaymentMethod: true,
      requestsPerMinute: null,
    });
    data = await readyDataset(caller(0), "ahoy", ahoyRows(12));
  });

  afterAll(async () => {
    for (const worker of workers) await worker.kill();
    for (const server of servers) await kill(server.child);
    await db?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test("servers starting together migrate once and load the development seed once", async () => {
    const migrations = await sql(db.url, "SELECT version, COUNT(*)::int AS n FROM schema_migrations GROUP BY version");
    assert.ok(migrations.length >= 4 && migrations.every((m) => m.n === 1));
    const [acme] = await sql(db.url, "SELECT COUNT(*)::int AS n FROM api_keys WHERE account_id = 'acme'");
    assert.equal(acme?.n, 1, "acme's demo key once");
  });

  test("200 creations with 50 shared Idempotency-Keys over two servers: 50 jobs, each trained and charged once", async () => {
    const started = Date.now();
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => {
        const k = i % 50;
        const body = {
          baseModel: "accounts/maas/models/tiny-chat",
          inputDatasetVersion: data,
          config: { outputModelId: `m-${k}`, epochs: 1 },
        };
        return call(caller(i), "POST", "/supervisedFineTuningJobs", body, { "idempotency-key": `key-${k}` }).then(
          (r) => ({ k, ...r }),
        );
      }),
    );
    for (const answer of answers) assert.equal(answer.status, 201, answer.text);
    const byKey = new Map<number, Set<string>>();
    for (const { k, body } of answers) byKey.set(k, (byKey.get(k) ?? new Set()).add(body.name));
    assert.ok(
      [...byKey.values()].every((names) => names.size === 1),
      "every answer for a key names one job",
    );
    const names = new Set(answers.map((a) => a.body.name as string));
    assert.equal(names.size, 50);
    const [count] = await sql(db.url, "SELECT COUNT(*)::int AS n FROM training_jobs WHERE account_id = 'multi'");
    assert.equal(count?.n, 50, "exactly 50 jobs in the store");

    await waitFor(async () => ((await jobsState()).JOB_STATE_SUCCEEDED === 50 ? true : undefined), 180_000, 250);
    const claims = events().filter((e) => e.type === "claimed" && names.has(e.job));
    assert.equal(claims.length, 50, "each job claimed once");
    assert.equal(new Set(claims.map((c) => c.job)).size, 50);
    assert.ok(claims.every((c) => !c.resumed));
    for (const worker of workers)
      assert.ok(
        worker.events.some((e) => e.type === "claimed"),
        `worker ${worker.pid} trained nothing`,
      );
    const released = events().filter((e) => e.type === "released" && names.has(e.job));
    assert.ok(released.length === 50 && released.every((e) => e.outcome === "done"));
    const [charges] = await sql(
      db.url,
      "SELECT COUNT(*)::int AS n FROM usage_records WHERE account_id = 'multi' AND kind = 'fine_tuning'",
    );
    assert.equal(charges?.n, 50, "each job charged once");
    const [models] = await sql(db.url, "SELECT COUNT(*)::int AS n FROM account_models WHERE account_id = 'multi'");
    assert.equal(models?.n, 50);
    console.log(
      `# 200 creations (50 keys) → 50 jobs, trained by workers ${workers.map((w) => `${w.pid}: ${w.events.filter((e) => e.type === "claimed" && names.has(e.job)).length}`).join(", ")} in ${Date.now() - started} ms`,
    );
  });

  test("a cancel sent to a server stops the worker training the job within a step or so", async () => {
    const created = await createSftJob(caller(0), data, { outputModelId: "long-one", epochs: 100 });
    const name = created.body.name as string;
    await waitFor(
      async () => (events().some((e) => e.type === "claimed" && e.job === name) ? true : undefined),
      30_000,
    );
    await waitFor(
      async () =>
        (await call(caller(1), "GET", `/supervisedFineTuningJobs/${created.body.jobId}`)).body.progress
          .processedTokens > 0
          ? true
          : undefined,
      30_000,
    );

    const at = Date.now();
    const cancelled = await call(caller(1), "POST", `/supervisedFineTuningJobs/${created.body.jobId}:cancel`);
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.equal(cancelled.body.state, "JOB_STATE_CANCELLED");
    // Billed for what it trained before the cancel, once (the decisions, Billing).
    assert.equal(cancelled.body.execution.billedTokens, cancelled.body.progress.processedTokens);
    const [charged] = await sql(
      db.url,
      "SELECT COUNT(*)::int AS n FROM usage_records WHERE account_id = 'multi' AND kind = 'fine_tuning'",
    );
    assert.equal(charged?.n, 51, "the cancelled job charged once");
    const released = await waitFor(
      async () => events().find((e) => e.type === "released" && e.job === name),
      10_000,
      10,
    );
    assert.equal(released.outcome, "stopped");
    const tookMs = Date.parse(released.at) - at;
    // The runner checks the job's state at every progress write (every 250 ms) and a step is milliseconds.
    assert.ok(tookMs < 3_000, `the worker stopped ${tookMs} ms after the cancel`);
    console.log(`# the worker stopped ${tookMs} ms after the cancel was sent`);
    const metrics = async () =>
      (await call(caller(0), "GET", `/supervisedFineTuningJobs/${created.body.jobId}/metrics?maxPoints=10000`)).body
        .points.length;
    const before = await metrics();
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(await metrics(), before, "no step recorded after it stopped");
    assert.equal(
      (await call(caller(0), "GET", `/supervisedFineTuningJobs/${created.body.jobId}`)).body.state,
      "JOB_STATE_CANCELLED",
    );
  });

  test("a worker killed mid-training: the other resumes from the checkpoint once its lease ran out, and the job succeeds once", async () => {
    const rows = await readyDataset(caller(0), "ahoy-big", ahoyRows(60));
    const created = await createSftJob(caller(1), rows, { outputModelId: "survivor", epochs: 8 });
    const name = created.body.name as string;
    const jobPath = `/supervisedFineTuningJobs/${created.body.jobId}`;
    await waitFor(
      async () => {
        const job = (await call(caller(0), "GET", jobPath)).body;
        return job.state === "JOB_STATE_RUNNING" && job.progress.epoch >= 2 ? job : undefined;
      },
      60_000,
      20,
    );
    const holder = workers.find((w) => w.events.some((e) => e.type === "claimed" && e.job === name));
    assert.ok(holder, "a worker claimed it");
    await holder.kill();
    const killedAt = Date.now();

    const other = workers.find((w) => w !== holder) as WorkerProcess;
    const resumed = await waitFor(async () => other.events.find((e) => e.type === "claimed" && e.job === name), 30_000);
    assert.equal(resumed.resumed, true, "taken over from the checkpoint, not started again");
    assert.ok(Date.parse(resumed.at) - killedAt >= Number(LEASE_MS) / 2, "not before the lease could have run out");
    const job = await waitFor(
      async () => {
        const got = (await call(caller(1), "GET", jobPath)).body;
        return ["JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED"].includes(got.state) ? got : undefined;
      },
      120_000,
      100,
    );
    assert.equal(job.state, "JOB_STATE_SUCCEEDED", JSON.stringify(job));
    const curve = (await call(caller(0), "GET", `${jobPath}/metrics?maxPoints=10000`)).body;
    const steps = curve.points.map((p: { step: string }) => Number(p.step));
    assert.deepEqual(
      steps,
      Array.from({ length: steps.length }, (_, i) => i + 1),
      "every step once, in order",
    );
    const [charges] = await sql(
      db.url,
      "SELECT COUNT(*)::int AS n FROM usage_records WHERE account_id = 'multi' AND kind = 'fine_tuning'",
    );
    assert.equal(charges?.n, 52, "charged once more: once for this job");
    // Back to two workers for anything after.
    workers = [other, await startWorker(workerEnv())];
  });
});
