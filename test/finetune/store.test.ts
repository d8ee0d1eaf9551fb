/**
 * The fine-tuning store on its own: queue expiry, claiming under leases (never twice at
 * once, taken over once a lease runs out), idempotency records, output model ids, and a
 * job's bill written with its end.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, test } from "vitest";
import { CANCELLABLE_STATES, type JobRecord } from "../../server/store/fine-tuning.ts";
import { queuedJob } from "../store/records.ts";
import { openTestStore } from "../../harness/test-store.ts";
import type { Store } from "../../server/store/store.ts";

let dir: string;
let store: Store;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "ft-store-"));
  store = await openTestStore(dir);
  await store.accounts.create({ id: "acme" });
  // The key the test jobs name as their creator (test/store/records.ts): a bill is charged to it.
  await store.apiKeys.create({ id: "key_1", accountId: "acme", secretHash: "0".repeat(64), hint: "sk-…0000" });
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  // Each test starts with no claimable job: earlier ones are moved out of the way.
  for (;;) {
    const claimed = await store.fineTuning.claimJob("sweeper", new Date(0), 0);
    if (!claimed) break;
    await store.fineTuning.updateJob("acme", claimed.job.jobId, { state: "JOB_STATE_FAILED" });
  }
});

function job(createTime = new Date()): JobRecord {
  return queuedJob("acme", { createTime });
}

/** The model a job of `job()` records as it succeeds. */
function modelOf(queued: JobRecord) {
  return {
    accountId: "acme",
    modelId: queued.config.outputModelId,
    baseModel: "tiny-chat",
    jobName: `accounts/acme/trainingJobs/${queued.jobId}`,
    adapterPath: "models/x.lora",
    createTime: new Date(),
  };
}

test("a job queued longer than the TTL expires; a younger one does not", async () => {
  const old = job(new Date(Date.now() - 10_000));
  const young = job();
  await store.fineTuning.createJob(old);
  await store.fineTuning.createJob(young);
  assert.equal(await store.fineTuning.expireQueued(new Date(Date.now() - 5_000), new Date()), 1);
  const expired = await store.fineTuning.getJob("acme", "JOB_TYPE_SFT", old.jobId);
  assert.equal(expired?.state, "JOB_STATE_EXPIRED");
  assert.ok(expired?.completeTime);
  assert.equal((await store.fineTuning.getJob("acme", "JOB_TYPE_SFT", young.jobId))?.state, "JOB_STATE_QUEUED");
});

test("a claimed job is not claimed again while its lease holds, and is taken over after", async () => {
  const queued = job();
  await store.fineTuning.createJob(queued);
  const now = new Date();
  const first = await store.fineTuning.claimJob("runner-a", now, 1_000);
  assert.equal(first?.job.jobId, queued.jobId);
  assert.equal(first?.resumed, false);
  assert.equal(first?.job.state, "JOB_STATE_RUNNING");
  assert.equal(await store.fineTuning.claimJob("runner-b", new Date(now.getTime() + 500), 1_000), undefined);
  const taken = await store.fineTuning.claimJob("runner-b", new Date(now.getTime() + 1_500), 1_000);
  assert.equal(taken?.job.jobId, queued.jobId);
  assert.equal(taken?.resumed, true);
  assert.equal(
    await store.fineTuning.renewLease("acme", queued.jobId, "runner-a", new Date()),
    false,
    "the old runner lost it",
  );
  assert.equal(await store.fineTuning.renewLease("acme", queued.jobId, "runner-b", new Date()), true);
});

test("an idempotency key returns the first job, and conflicts on another body", async () => {
  const first = job();
  const claim = { key: "k1", requestHash: "h1" };
  assert.equal((await store.fineTuning.createJob(first, claim)).created, true);
  const again = await store.fineTuning.createJob(job(), claim);
  assert.equal(again.created, false);
  assert.equal(again.job.jobId, first.jobId);
  await assert.rejects(store.fineTuning.createJob(job(), { key: "k1", requestHash: "h2" }), {
    name: "StoreError",
    kind: "idempotency-conflict",
  });
});

test("an output model id is taken by a live job and freed by a failed one", async () => {
  const live = job();
  await store.fineTuning.createJob(live);
  await assert.rejects(store.fineTuning.createJob({ ...job(), config: { ...live.config } }), {
    name: "StoreError",
    kind: "already-exists",
    field: "config.outputModelId",
  });
  await store.fineTuning.updateJob("acme", live.jobId, { state: "JOB_STATE_FAILED" });
  assert.equal((await store.fineTuning.createJob({ ...job(), config: { ...live.config } })).created, true);
});

test("a runner that lost its job to another cannot write over it (updates fenced by the lease owner)", async () => {
  // Jobs earlier tests left running under leases that have run out by now go first.
  for (let claimed; (claimed = await store.fineTuning.claimJob("sweeper", new Date(Date.now() + 60_000), 0));) {
    await store.fineTuning.updateJob("acme", claimed.job.jobId, { state: "JOB_STATE_FAILED" });
  }
  const queued = job();
  await store.fineTuning.createJob(queued);
  const now = new Date();
  await store.fineTuning.claimJob("runner-a", now, 1_000);
  const taken = await store.fineTuning.claimJob("runner-b", new Date(now.getTime() + 1_500), 1_000);
  assert.equal(taken?.job.jobId, queued.jobId);
  assert.equal(
    await store.fineTuning.updateJob(
      "acme",
      queued.jobId,
      { progress: { ...queued.progress, percent: 50 } },
      undefined,
      "runner-a",
    ),
    undefined,
    "the old holder is fenced out",
  );
  const model = modelOf(queued);
  await assert.rejects(store.fineTuning.completeJob("acme", queued.jobId, model, {}, "runner-a"), {
    name: "StoreError",
    kind: "job-state",
  });
  assert.equal(
    await store.fineTuning.findModel("acme", queued.config.outputModelId),
    undefined,
    "nothing recorded for the fenced-out runner",
  );
  assert.equal(
    (
      await store.fineTuning.updateJob(
        "acme",
        queued.jobId,
        { progress: { ...queued.progress, percent: 60 } },
        undefined,
        "runner-b",
      )
    )?.progress.percent,
    60,
  );
  assert.equal(
    (await store.fineTuning.completeJob("acme", queued.jobId, model, {}, "runner-b")).state,
    "JOB_STATE_SUCCEEDED",
  );
});

/** The account's balance and its fine-tuning charges, as the store has them. */
async function money(): Promise<{ balanceMicros: number; spentMicros: number }> {
  const account = await store.accounts.get("acme");
  return { balanceMicros: account!.balanceMicros, spentMicros: await store.usage.spentSince("acme", new Date(0)) };
}

// 2 000 tokens at 0.50 a million: 1 000 micro-units.
const BILL = { ratePerMillion: "0.50", at: new Date() };
const TRAINED = { percent: 40, epoch: 1, totalEpochs: 3, processedTokens: 2_000 };

test("a job ends with its bill: completing or cancelling writes the bill on the job and charges the account in one transaction", async () => {
  const succeeding = job();
  await store.fineTuning.createJob(succeeding);
  await store.fineTuning.claimJob("runner-a", new Date(), 60_000);
  await store.fineTuning.updateJob("acme", succeeding.jobId, { progress: TRAINED }, undefined, "runner-a");
  const before = await money();
  const done = await store.fineTuning.completeJob("acme", succeeding.jobId, modelOf(succeeding), {}, "runner-a", BILL);
  assert.equal(done.execution.billedTokens, 2_000);
  assert.equal(done.execution.billedMicros, 1_000);
  const after = await money();
  assert.equal(before.balanceMicros - after.balanceMicros, 1_000);
  assert.equal(after.spentMicros - before.spentMicros, 1_000);

  const cancelling = job();
  await store.fineTuning.createJob(cancelling);
  await store.fineTuning.claimJob("runner-a", new Date(), 60_000);
  await store.fineTuning.updateJob("acme", cancelling.jobId, { progress: TRAINED }, undefined, "runner-a");
  const cancelled = await store.fineTuning.updateJob(
    "acme",
    cancelling.jobId,
    { state: "JOB_STATE_CANCELLED" },
    CANCELLABLE_STATES,
    undefined,
    BILL,
  );
  assert.equal(cancelled?.execution.billedMicros, 1_000);
  assert.equal(after.balanceMicros - (await money()).balanceMicros, 1_000);
});

test("an end that is refused charges nothing: a fenced-out completion, a cancel of an ended job", async () => {
  const queued = job();
  await store.fineTuning.createJob(queued);
  await store.fineTuning.claimJob("runner-a", new Date(), 60_000);
  await store.fineTuning.updateJob("acme", queued.jobId, { progress: TRAINED }, undefined, "runner-a");
  const before = await money();
  await assert.rejects(store.fineTuning.completeJob("acme", queued.jobId, modelOf(queued), {}, "runner-b", BILL), {
    kind: "job-state",
  });
  await store.fineTuning.completeJob("acme", queued.jobId, modelOf(queued), {}, "runner-a");
  const refused = await store.fineTuning.updateJob(
    "acme",
    queued.jobId,
    { state: "JOB_STATE_CANCELLED" },
    CANCELLABLE_STATES,
    undefined,
    BILL,
  );
  assert.equal(refused, undefined);
  assert.deepEqual(await money(), before, "no charge for either");
});
