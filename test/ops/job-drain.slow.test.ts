/**
 * A training job on a worker that gets SIGTERM, over real processes sharing one store and
 * DATA_DIR (a server that runs no jobs, two workers): the job trains on to the end of its
 * epoch (its checkpoint), the worker releases the lease and exits 0, and the other worker
 * resumes the job from that checkpoint at once, not after JOB_LEASE_MS (a minute here).
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, test } from "vitest";
import { ahoyRows, call, createSftJob, readyDataset, waitFor, waitForJob, type Caller } from "../finetune/fixtures.ts";
import type { TestServer } from "../../harness/test-server.ts";
import { startOpsServer, startOpsWorker } from "./process.ts";

const dataDir = mkdtempSync(path.join(os.tmpdir(), "ops-job-drain-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

test("SIGTERM mid-epoch: the job checkpoints, its lease is released, and another worker resumes it at once", async () => {
  const env = { JOB_LEASE_MS: "60000", JOB_POLL_MS: "200" };
  const server = await startOpsServer(dataDir, { ...env, RUN_JOBS: "0" });
  const first = await startOpsWorker(dataDir, { ...env, SHUTDOWN_GRACE_MS: "60000" });
  const acme: Caller = { server: server as unknown as TestServer, account: "acme", key: server.keys.acme as string };
  const data = await readyDataset(acme, "ahoy", ahoyRows(60));
  const created = await createSftJob(acme, data, { outputModelId: "drained", epochs: 3 });
  const jobId = created.body.jobId as string;
  const job = `accounts/acme/trainingJobs/${jobId}`;

  // Training its second epoch: one checkpoint is behind it.
  const training = await waitFor(async () => {
    const got = (await call(acme, "GET", `/supervisedFineTuningJobs/${jobId}`)).body;
    return got.state === "JOB_STATE_RUNNING" && got.progress.epoch >= 2 ? got : undefined;
  });
  const second = await startOpsWorker(dataDir, env);
  const epochAtSigterm = training.progress.epoch as number;

  assert.equal(await first.terminate(), 0);
  const exitedAt = Date.now();
  assert.match(first.stdout(), /"type":"released","job":"[^"]+","outcome":"stopped"/);
  const lastCheckpoint = Math.max(
    ...first
      .entries()
      .filter((e) => e.event === "job.state" && e.job === job)
      .map((e) => Number(e.checkpointEpoch)),
  );
  assert.ok(
    lastCheckpoint >= epochAtSigterm,
    `the epoch in training when SIGTERM came (${epochAtSigterm}) was checkpointed (last: ${lastCheckpoint})`,
  );

  const claimed = await second.waitForEntry((e) => e.event === "job.claimed" && e.job === job, 15_000);
  assert.ok(Date.now() - exitedAt < 15_000, "resumed well before the 60 s lease would have run out");
  assert.equal(claimed.resumed, true);
  assert.equal(claimed.checkpointEpoch, lastCheckpoint, "resumed from the checkpoint the stopping worker wrote");

  const { job: done } = await waitForJob(acme, "supervisedFineTuningJobs", jobId);
  assert.equal(done.state, "JOB_STATE_SUCCEEDED", JSON.stringify(done));
  const curve = (await call(acme, "GET", `/supervisedFineTuningJobs/${jobId}/metrics?maxPoints=10000`)).body;
  const steps = curve.points.map((p: { step: string }) => Number(p.step));
  assert.deepEqual(
    steps,
    Array.from({ length: steps.length }, (_, i) => i + 1),
    "every step once, in order",
  );
  assert.equal(await second.terminate(), 0);
  assert.equal(await server.terminate(), 0);
});
