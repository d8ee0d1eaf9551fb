/**
 * A store that cannot be reached in the middle of a job (its curve or progress writes fail
 * with StoreError `unavailable`) pauses the job, it does not fail it: the runner lets the job
 * go and claims it again from its last checkpoint once the store answers, and the job
 * succeeds. Before, the first failed write ended the job FAILED INTERNAL.
 */
import assert from "node:assert/strict";
import { afterAll, beforeAll, test } from "vitest";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";
import { StoreError } from "../../server/store/errors.ts";
import { captureLog } from "../ops/log-capture.ts";
import { ahoyRows, createSftJob, readyDataset, waitForJob, type Caller } from "./fixtures.ts";

let server: TestServer;
let acme: Caller;

beforeAll(async () => {
  server = await startTestServer();
  acme = { server, account: "acme", key: server.keys.acme as string };
});
afterAll(() => server.close());

test("curve writes that fail during an outage pause the job; it resumes and succeeds", async (t) => {
  const log = captureLog(t, { minLevel: "warn" });
  const data = await readyDataset(acme, "outage-rows", ahoyRows(24));
  // The outage: the first two training-curve writes find the store unreachable.
  const fineTuning = server.store.fineTuning;
  const appendCurve = fineTuning.appendCurve.bind(fineTuning);
  let failures = 0;
  fineTuning.appendCurve = async (...args) => {
    if (args[2] === "training" && failures < 2) {
      failures++;
      throw new StoreError("unavailable", "The database is not answering. Retry shortly.", { retryAfterSeconds: 1 });
    }
    return appendCurve(...args);
  };
  try {
    const created = await createSftJob(acme, data, { outputModelId: "outlasts-outage", epochs: 2 });
    const { job, seen } = await waitForJob(acme, "supervisedFineTuningJobs", created.body.jobId as string);
    assert.equal(job.state, "JOB_STATE_SUCCEEDED", `${JSON.stringify(job)}; seen ${seen.join(" → ")}`);
    assert.equal(failures, 2, "the outage happened");
    const paused = log.entries().filter((entry) => entry.event === "job.paused");
    assert.equal(paused.length, 2, "each failed write paused the job once");
    assert.equal(paused[0]?.job, job.name);
  } finally {
    fineTuning.appendCurve = appendCurve;
  }
});

test("a write that never succeeds still ends the job: FAILED INTERNAL after ten pauses", async (t) => {
  const log = captureLog(t, { minLevel: "warn" });
  const data = await readyDataset(acme, "never-rows", ahoyRows(24));
  const fineTuning = server.store.fineTuning;
  const appendCurve = fineTuning.appendCurve.bind(fineTuning);
  fineTuning.appendCurve = async (...args) => {
    if (args[2] === "training") throw new StoreError("unavailable", "The database is not answering. Retry shortly.");
    return appendCurve(...args);
  };
  try {
    const created = await createSftJob(acme, data, { outputModelId: "never-written", epochs: 1 });
    const { job } = await waitForJob(acme, "supervisedFineTuningJobs", created.body.jobId as string);
    assert.equal(job.state, "JOB_STATE_FAILED");
    assert.equal(job.errorClass, "INTERNAL");
    assert.equal(log.entries().filter((entry) => entry.event === "job.paused" && entry.job === job.name).length, 10);
  } finally {
    fineTuning.appendCurve = appendCurve;
  }
});
