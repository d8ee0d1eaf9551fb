/**
 * Restart safety of the upstream trainer: the real server (a child process) is killed with
 * SIGKILL while the upstream trains, and started again on the same data directory. The
 * job resumes polling the same upstream job (none is created twice, even when the crash
 * came before its id was stored: the upstream is asked for the job this server tagged),
 * its curve has every step once, and it is billed once.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, test } from "vitest";
import { startChildServer, type ChildServer } from "../server/child-server.ts";
import { startFakeUpstream, type FakeUpstream } from "../server/fake-upstream.ts";
import type { TestServer } from "../../harness/test-server.ts";
import { startFakeFineTuning, type FakeFineTuning } from "../support/fake-openai-fine-tuning.ts";
import { ahoyRows, call, readyDataset, waitFor, waitForJob, type Caller } from "./fixtures.ts";
import { startWorker, type WorkerProcess } from "../postgres/processes.ts";
import { openTestStore, storeEnvFor } from "../../harness/test-store.ts";
import { costMicros } from "../../server/store/money.ts";
import { KEY_ENV, RATE, UPSTREAM_BASE, upstreamCatalog, upstreamRouting } from "./upstream-fixtures.ts";

const dataDir = mkdtempSync(path.join(os.tmpdir(), "upstream-restart-"));
let child: ChildServer | undefined;
let trainer: FakeFineTuning | undefined;
let inference: FakeUpstream | undefined;
afterAll(async () => {
  await child?.stop().catch(() => undefined);
  await trainer?.close();
  await inference?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

function caller(server: ChildServer): Caller {
  return { server: server as unknown as TestServer, account: "acme", key: server.keys.acme as string };
}

const KEY = "sk-restart-secret";

/**
 * The fake upstream trainer and inference (started once for the file), and a folder with a
 * catalogue and routing file naming them: the environment a child server needs.
 */
async function upstreamConfig(
  prefix: string,
  extraEnv: Record<string, string> = {},
  catalog: Parameters<typeof upstreamCatalog>[1] = {},
): Promise<{ dir: string; dataDir: string; env: Record<string, string>; trainer: FakeFineTuning }> {
  trainer ??= await startFakeFineTuning({ models: [UPSTREAM_BASE], apiKey: KEY, stepMs: 40 });
  inference ??= await startFakeUpstream({ kind: "stream", text: "base" });
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  const catalogFile = path.join(dir, "catalog.json");
  const routingFile = path.join(dir, "routing.json");
  writeFileSync(catalogFile, JSON.stringify(upstreamCatalog(trainer.baseUrl, catalog)));
  writeFileSync(routingFile, JSON.stringify(upstreamRouting(inference.baseUrl)));
  const env = { CATALOG_FILE: catalogFile, ROUTING_FILE: routingFile, [KEY_ENV]: KEY, ...extraEnv };
  return { dir, dataDir: path.join(dir, "data"), env, trainer };
}

/** A supervised job on the upstream base model; its id and the tag the upstream job carries. */
async function createUpstreamJob(
  acme: Caller,
  outputModelId: string,
  rows: number,
  epochs = 1,
): Promise<{ jobId: string; tag: string }> {
  const data = await readyDataset(acme, "ahoy", ahoyRows(rows));
  const created = await call(acme, "POST", "/supervisedFineTuningJobs", {
    baseModel: "accounts/maas/models/big-base",
    inputDatasetVersion: data,
    config: { outputModelId, epochs },
  });
  assert.equal(created.status, 201, created.text);
  const jobId = created.body.jobId as string;
  return { jobId, tag: `accounts/acme/trainingJobs/${jobId}` };
}

test("killed while the upstream trains, restarted twice: one upstream job, every step once, billed once", async () => {
  const config = await upstreamConfig("upstream-restart-config-", { JOB_LEASE_MS: "1500" });
  const { env, trainer } = config;
  try {
    child = await startChildServer(dataDir, env);
    let acme = caller(child);
    const { jobId, tag } = await createUpstreamJob(acme, "survivor", 40, 2);
    const upstreamJobs = () => trainer.jobs().filter((j) => j.metadata?.maas_job === tag);
    const curveSteps = async (who: Caller) =>
      (await call(who, "GET", `/supervisedFineTuningJobs/${jobId}/metrics?maxPoints=10000`)).body.points.map((p: any) =>
        Number(p.step),
      );

    // Some steps recorded, then the upstream holds still and the server dies.
    await waitFor(async () => ((await curveSteps(acme)).length >= 3 ? true : undefined));
    trainer.hold = true;
    await child.kill();

    // Restart 1: the stored upstream job id is polled again.
    child = await startChildServer(dataDir, env);
    acme = caller(child);
    const before = (await curveSteps(acme)).length;
    await waitFor(async () =>
      (await call(acme, "GET", `/supervisedFineTuningJobs/${jobId}`)).body.state === "JOB_STATE_RUNNING"
        ? true
        : undefined,
    );
    assert.equal(upstreamJobs().length, 1, "no second upstream job");
    await child.kill();

    // Restart 2: as if the crash came between the upstream create and storing its id.
    const stateFile = path.join(dataDir, "checkpoints", "acme", `${jobId}.upstream.json`);
    assert.ok(existsSync(stateFile), "the upstream job id is kept in DATA_DIR");
    rmSync(stateFile);
    child = await startChildServer(dataDir, env);
    acme = caller(child);
    trainer.hold = false;
    const { job, seen } = await waitForJob(acme, "supervisedFineTuningJobs", jobId, 60_000);
    assert.equal(job.state, "JOB_STATE_SUCCEEDED", JSON.stringify(job));
    assert.ok(!seen.includes("JOB_STATE_QUEUED"));
    assert.equal(upstreamJobs().length, 1, "the tagged upstream job was found, not made again");
    assert.equal(job.progress.processedTokens, String(upstreamJobs()[0]?.trained_tokens));

    const steps = await curveSteps(acme);
    assert.ok(before >= 3);
    assert.deepEqual(
      steps,
      Array.from({ length: Math.ceil(40 / 4) * 2 }, (_, i) => i + 1),
      "every step once, in order",
    );

    // Billed once, for the tokens the upstream reports: the seed's 100.00 less that, read from the store.
    const store = await openTestStore(dataDir);
    try {
      const expected = 100_000_000 - costMicros(RATE, upstreamJobs()[0]?.trained_tokens as number);
      await waitFor(
        async () => ((await store.accounts.get("acme"))?.balanceMicros === expected ? true : undefined),
        10_000,
      );
    } finally {
      await store.close();
    }
  } finally {
    rmSync(config.dir, { recursive: true, force: true });
  }
});

test("cancelled while no runner holds it (its server killed, the next one runs no jobs): the upstream job is cancelled", async () => {
  const { dir, dataDir, env, trainer } = await upstreamConfig("upstream-orphan-", { JOB_LEASE_MS: "60000" });
  try {
    trainer.hold = true;
    child = await startChildServer(dataDir, env);
    let acme = caller(child);
    const { jobId, tag } = await createUpstreamJob(acme, "orphan", 12);
    const upstream = await waitFor(async () => {
      const found = trainer.jobs().find((j) => j.metadata?.maas_job === tag);
      return found?.status === "running" ? found : undefined;
    });
    await child.kill();

    child = await startChildServer(dataDir, { ...env, RUN_JOBS: "0" });
    acme = caller(child);
    const cancelled = await call(acme, "POST", `/supervisedFineTuningJobs/${jobId}:cancel`);
    assert.equal(cancelled.status, 200, cancelled.text);
    await waitFor(async () => (trainer.cancels.includes(upstream.id) ? true : undefined), 10_000);
    assert.equal(upstream.status, "cancelled");
    await child.stop();
    child = undefined;
  } finally {
    trainer.hold = false;
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a training worker (npm run worker) reads CATALOG_FILE and sends the job upstream", async () => {
  const { dir, dataDir, env, trainer } = await upstreamConfig("upstream-worker-");
  let worker: WorkerProcess | undefined;
  try {
    child = await startChildServer(dataDir, { ...env, RUN_JOBS: "0" });
    const acme = caller(child);
    worker = await startWorker({ ...(await storeEnvFor(dataDir)), ...env, JOB_POLL_MS: "50", LOG_LEVEL: "warn" });
    const { jobId, tag } = await createUpstreamJob(acme, "by-worker", 12);
    const { job } = await waitForJob(acme, "supervisedFineTuningJobs", jobId, 60_000);
    assert.equal(job.state, "JOB_STATE_SUCCEEDED", `${JSON.stringify(job)}\n${worker.output()}`);
    assert.equal(trainer.jobs().filter((j) => j.metadata?.maas_job === tag).length, 1);
    assert.ok(
      worker.events.some((e) => e.type === "claimed" && e.job === tag),
      "the worker ran it",
    );
    await child.stop();
    child = undefined;
  } finally {
    await worker?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("SIGTERM while the upstream trains: the server stops at once (nothing to checkpoint here), and the next one resumes polling", async () => {
  const { dir, dataDir, env, trainer } = await upstreamConfig(
    "upstream-drain-",
    { SHUTDOWN_GRACE_MS: "20000" },
    { pollMs: 2_000, maxPollMs: 2_000 },
  );
  try {
    trainer.hold = true;
    child = await startChildServer(dataDir, env);
    let acme = caller(child);
    const { jobId, tag } = await createUpstreamJob(acme, "drained", 12);
    await waitFor(async () => {
      const job = (await call(acme, "GET", `/supervisedFineTuningJobs/${jobId}`)).body;
      assert.notEqual(job.state, "JOB_STATE_FAILED", JSON.stringify(job));
      return trainer.jobs().find((j) => j.metadata?.maas_job === tag)?.status === "running" ? true : undefined;
    }, 20_000);
    const started = Date.now();
    await child.stop();
    const took = Date.now() - started;
    // A poll waits 2 s here; the drain looks at the stop every quarter second instead of waiting out the grace.
    assert.ok(took < 5_000, `the drain took ${took} ms`);

    child = await startChildServer(dataDir, env);
    acme = caller(child);
    trainer.hold = false;
    const { job, seen } = await waitForJob(acme, "supervisedFineTuningJobs", jobId, 60_000);
    assert.equal(job.state, "JOB_STATE_SUCCEEDED", JSON.stringify(job));
    assert.ok(!seen.includes("JOB_STATE_QUEUED"));
    assert.equal(trainer.jobs().filter((j) => j.metadata?.maas_job === tag).length, 1);
    await child.stop();
    child = undefined;
  } finally {
    trainer.hold = false;
    rmSync(dir, { recursive: true, force: true });
  }
});
