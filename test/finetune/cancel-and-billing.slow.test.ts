/**
 * Cancel and billing (docs/contract-decisions.md, Job states and Billing): only QUEUED and
 * RUNNING jobs can be cancelled (CHECKPOINTING is 409 JOB_STATE_INVALID, SFT and DPO alike);
 * a job is billed for the tokens actually trained on: SUCCEEDED for what it trained,
 * CANCELLED for what it trained before the cancel, FAILED and EXPIRED nothing; the job shows
 * the bill in `execution` and the account's balance moves by exactly that.
 *
 * Two servers: one that runs no jobs, where a test puts a job in the state it needs through
 * the store (CHECKPOINTING lasts a few milliseconds in real training), and one that trains.
 */
import assert from "node:assert/strict";
import { afterAll, beforeAll, describe, test } from "vitest";
import type { JobState } from "../../server/store/fine-tuning.ts";
import { costMicros, formatMoney, parseMoney } from "../../server/store/money.ts";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";
import { assertError } from "../support/http.ts";
import { ahoyPreferenceRows, ahoyRows, call, readyDataset, waitFor, waitForJob, type Caller } from "./fixtures.ts";

const RATE = "0.50"; // tiny-chat's training rate per million tokens

let still: TestServer;
let live: TestServer;
let idle: Caller;
let busy: Caller;
let idleData: { sft: string; dpo: string };
let busyData: string;

beforeAll(async () => {
  still = await startTestServer({ fineTuning: { runJobs: false } });
  live = await startTestServer({ fineTuning: { pollMs: 20 } });
  idle = { server: still, account: "acme", key: still.keys.acme as string };
  busy = { server: live, account: "acme", key: live.keys.acme as string };
  idleData = {
    sft: await readyDataset(idle, "ahoy", ahoyRows(40)),
    dpo: await readyDataset(idle, "ahoy-pref", ahoyPreferenceRows(40)),
  };
  busyData = await readyDataset(busy, "ahoy", ahoyRows(40));
});
afterAll(async () => {
  await still.close();
  await live.close();
});

const COLLECTIONS = [
  { path: "supervisedFineTuningJobs", data: () => idleData.sft },
  { path: "dpoJobs", data: () => idleData.dpo },
] as const;

async function balance(server: TestServer): Promise<number> {
  const account = await server.store.accounts.get("acme");
  assert.ok(account);
  return account.balanceMicros;
}

async function queuedJob(collection: (typeof COLLECTIONS)[number], outputModelId: string): Promise<string> {
  const created = await call(idle, "POST", `/${collection.path}`, {
    baseModel: "accounts/maas/models/tiny-chat",
    inputDatasetVersion: collection.data(),
    config: { outputModelId, epochs: 1 },
  });
  assert.equal(created.status, 201, created.text);
  return created.body.jobId as string;
}

/** Moves a QUEUED job of the idle server to `state`, as a runner would, with `processedTokens` trained. */
async function putInState(jobId: string, state: JobState, processedTokens = 0): Promise<void> {
  const job = await still.store.fineTuning.updateJob(
    "acme",
    jobId,
    {
      state,
      startTime: new Date(),
      progress: { percent: 10, epoch: 1, totalEpochs: 1, processedTokens },
    },
    ["JOB_STATE_QUEUED"],
  );
  assert.equal(job?.state, state);
}

describe("only QUEUED and RUNNING jobs can be cancelled", () => {
  for (const collection of COLLECTIONS) {
    test(`${collection.path}: a job in CHECKPOINTING is 409 JOB_STATE_INVALID, and stays CHECKPOINTING`, async () => {
      const jobId = await queuedJob(collection, `checkpointing-${collection.path.toLowerCase()}`);
      await putInState(jobId, "JOB_STATE_CHECKPOINTING", 500);
      const refused = await call(idle, "POST", `/${collection.path}/${jobId}:cancel`);
      assertError(refused, { status: 409, code: "JOB_STATE_INVALID", type: "invalid_request_error" });
      assert.match(refused.body.error.message, /CHECKPOINTING/);
      assert.match(refused.body.error.message, /only QUEUED and RUNNING/);
      const after = await call(idle, "GET", `/${collection.path}/${jobId}`);
      assert.equal(after.body.state, "JOB_STATE_CHECKPOINTING");
      assert.equal(after.body.execution.billedTokens, "0");
    });
  }
});

describe("billing", () => {
  for (const collection of COLLECTIONS) {
    test(`${collection.path}: a cancelled RUNNING job is billed for the tokens it trained before the cancel, and the balance moves by exactly that`, async () => {
      const jobId = await queuedJob(collection, `cancel-billed-${collection.path.toLowerCase()}`);
      await putInState(jobId, "JOB_STATE_RUNNING", 12_345);
      const before = await balance(still);
      const cancelled = await call(idle, "POST", `/${collection.path}/${jobId}:cancel`);
      assert.equal(cancelled.status, 200, cancelled.text);
      assert.equal(cancelled.body.state, "JOB_STATE_CANCELLED");
      const bill = costMicros(RATE, 12_345);
      assert.equal(cancelled.body.execution.billedTokens, "12345");
      assert.deepEqual(cancelled.body.execution.billedCost, { amount: formatMoney(bill), currency: "USD" });
      assert.equal(before - (await balance(still)), bill);
      const shown = await call(idle, "GET", `/${collection.path}/${jobId}`);
      assert.deepEqual(shown.body.execution, cancelled.body.execution);
    });
  }

  test("a job cancelled while QUEUED trained nothing and is billed nothing", async () => {
    const jobId = await queuedJob(COLLECTIONS[0], "cancel-queued");
    const before = await balance(still);
    const cancelled = await call(idle, "POST", `/supervisedFineTuningJobs/${jobId}:cancel`);
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.equal(cancelled.body.execution.billedTokens, "0");
    assert.deepEqual(cancelled.body.execution.billedCost, { amount: "0.00", currency: "USD" });
    assert.equal(await balance(still), before);
  });

  test("an EXPIRED job is not billed", async () => {
    const jobId = await queuedJob(COLLECTIONS[0], "expires");
    const before = await balance(still);
    await still.store.fineTuning.expireQueued(new Date(Date.now() + 60_000), new Date());
    const expired = await call(idle, "GET", `/supervisedFineTuningJobs/${jobId}`);
    assert.equal(expired.body.state, "JOB_STATE_EXPIRED");
    assert.equal(expired.body.execution.billedTokens, "0");
    assert.equal(await balance(still), before);
  });

  test("a SUCCEEDED job is billed for the tokens it trained, as its estimate said; the balance moves by exactly that", async () => {
    const body = { baseModel: "accounts/maas/models/tiny-chat", inputDatasetVersion: busyData };
    const config = { outputModelId: "billed-success", epochs: 1 };
    const estimate = await call(busy, "POST", "/supervisedFineTuningJobs:estimateCost", { ...body, config });
    const before = await balance(live);
    const created = await call(busy, "POST", "/supervisedFineTuningJobs", { ...body, config });
    assert.equal(created.status, 201, created.text);
    const { job } = await waitForJob(busy, "supervisedFineTuningJobs", created.body.jobId);
    assert.equal(job.state, "JOB_STATE_SUCCEEDED", JSON.stringify(job));
    assert.equal(job.execution.billedTokens, job.progress.processedTokens);
    assert.equal(job.execution.billedTokens, estimate.body.estimate.tokensProcessed);
    assert.deepEqual(job.execution.billedCost, estimate.body.estimate.estimatedCost);
    assert.equal(before - (await balance(live)), parseMoney(job.execution.billedCost.amount));
  });

  test("a job cancelled while training is billed for the tokens its progress showed at the cancel", async () => {
    const created = await call(busy, "POST", "/supervisedFineTuningJobs", {
      baseModel: "accounts/maas/models/tiny-chat",
      inputDatasetVersion: busyData,
      config: { outputModelId: "cancelled-in-training", epochs: 50 },
    });
    assert.equal(created.status, 201, created.text);
    const path = `/supervisedFineTuningJobs/${created.body.jobId}`;
    await waitFor(async () => {
      const job = (await call(busy, "GET", path)).body;
      return job.state === "JOB_STATE_RUNNING" && Number(job.progress.processedTokens) > 0 ? true : undefined;
    });
    const before = await balance(live);
    const cancelled = await call(busy, "POST", `${path}:cancel`);
    assert.equal(cancelled.status, 200, cancelled.text);
    const { execution, progress } = cancelled.body;
    assert.ok(Number(execution.billedTokens) > 0);
    assert.equal(execution.billedTokens, progress.processedTokens);
    assert.equal(execution.billedCost.amount, formatMoney(costMicros(RATE, Number(progress.processedTokens))));
    assert.equal(before - (await balance(live)), parseMoney(execution.billedCost.amount));
    const { job } = await waitForJob(busy, "supervisedFineTuningJobs", created.body.jobId);
    assert.deepEqual(job.execution, execution, "the runner's stop changes nothing of the bill");
  });

  test("a FAILED job is not billed", async () => {
    const before = await balance(live);
    const created = await call(busy, "POST", "/supervisedFineTuningJobs", {
      baseModel: "accounts/maas/models/tiny-chat",
      inputDatasetVersion: busyData,
      config: { outputModelId: "diverges", epochs: 1, learningRate: "1" },
    });
    assert.equal(created.status, 201, created.text);
    const { job } = await waitForJob(busy, "supervisedFineTuningJobs", created.body.jobId);
    assert.equal(job.state, "JOB_STATE_FAILED", JSON.stringify(job));
    assert.equal(job.execution.billedTokens, "0");
    assert.deepEqual(job.execution.billedCost, { amount: "0.00", currency: "USD" });
    assert.equal(await balance(live), before);
  });
});
