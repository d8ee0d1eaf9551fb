/**
 * abandonUpstreamJob (server/finetune/upstream/abandon.ts) against the fake OpenAI-format
 * fine-tuning API: the upstream job of a job FAILED here is cancelled and its files
 * deleted, through an outage; a job still active (another runner resumes it) or ended
 * otherwise is left alone.
 */
import assert from "node:assert/strict";
import { afterAll, beforeAll, beforeEach, describe, test } from "vitest";
import type { JobRecord } from "../../server/store/fine-tuning.ts";
import { abandonUpstreamJob } from "../../server/finetune/upstream/abandon.ts";
import { OpenAiFineTuningApi } from "../../server/finetune/upstream/openai-api.ts";
import { deleteUploadedFiles } from "../../server/finetune/upstream/uploaded-files.ts";
import { captureLog } from "../ops/log-capture.ts";
import { startFakeFineTuning, type FakeFineTuning } from "../support/fake-openai-fine-tuning.ts";

const BASE = "vendor-base-8b";
let trainer: FakeFineTuning;
let api: OpenAiFineTuningApi;

beforeAll(async () => {
  trainer = await startFakeFineTuning({ models: [BASE], stepMs: 50 });
  api = new OpenAiFineTuningApi({ baseUrl: trainer.baseUrl, model: BASE, timeoutMs: 500 });
});
afterAll(() => trainer?.close());
beforeEach(() => {
  trainer.outage = false;
  trainer.hold = true;
});

/** An upstream job, held before its first step, with its training file. */
async function runningUpstreamJob(): Promise<{ id: string; file: string }> {
  const signal = AbortSignal.timeout(5_000);
  const row = {
    messages: [
      { role: "user", content: "Hi" },
      { role: "assistant", content: "Ahoy!" },
    ],
  };
  const file = await api.uploadFile("rows.jsonl", `${JSON.stringify(row)}\n`, signal);
  const job = await api.createJob(
    {
      model: BASE,
      training_file: file,
      metadata: { maas_job: "accounts/acme/trainingJobs/t" },
      method: { type: "supervised", supervised: { hyperparameters: { n_epochs: 1 } } },
    },
    signal,
  );
  return { id: job.id, file };
}

function abandon(upstream: { id: string; file: string }, states: () => JobRecord["state"], boundMs = 2_000) {
  return abandonUpstreamJob({
    api,
    name: "accounts/acme/trainingJobs/t",
    upstreamJobId: async () => upstream.id,
    deleteFiles: () => deleteUploadedFiles(api, { trainingFileId: upstream.file }, "t", 1_000),
    jobState: async () => states(),
    firstWaitMs: 20,
    longestWaitMs: 100,
    boundMs,
    callTimeoutMs: 500,
  });
}

const statusOf = (id: string) => trainer.jobs().find((j) => j.id === id)?.status;

describe("the upstream job of a job that failed here", () => {
  test("past the bound, unreachable all along: logged as abandoned, naming the job, for the operator", async (t) => {
    const upstream = await runningUpstreamJob();
    trainer.outage = true;
    const logged = captureLog(t);
    await abandon(upstream, () => "JOB_STATE_FAILED", 300);
    const abandoned = logged.entries().filter((e) => e.event === "job.upstream_abandoned");
    assert.equal(abandoned.length, 1);
    assert.equal(abandoned[0]?.job, "accounts/acme/trainingJobs/t");
    assert.equal(abandoned[0]?.level, "error");
  });

  test("is cancelled and its file deleted once the upstream answers again", async () => {
    const upstream = await runningUpstreamJob();
    trainer.outage = true;
    const done = abandon(upstream, () => "JOB_STATE_FAILED");
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(trainer.cancels.length, 0, "nothing reached it during the outage");
    trainer.outage = false;
    await done;
    assert.equal(statusOf(upstream.id), "cancelled");
    assert.ok(trainer.deletedFiles.includes(upstream.file));
  });

  test("is waited for while the store still shows the job active, and then cancelled", async () => {
    const upstream = await runningUpstreamJob();
    let state: JobRecord["state"] = "JOB_STATE_RUNNING";
    setTimeout(() => (state = "JOB_STATE_FAILED"), 150);
    await abandon(upstream, () => state);
    assert.equal(statusOf(upstream.id), "cancelled");
  });

  test("is left running, and nothing logged as abandoned, when the job stays active (another runner resumed it)", async (t) => {
    const upstream = await runningUpstreamJob();
    const logged = captureLog(t);
    await abandon(upstream, () => "JOB_STATE_RUNNING", 300);
    assert.deepEqual(
      logged.entries().filter((e) => String(e.event).startsWith("job.upstream")),
      [],
      "no job.upstream_abandoned: the job is not failed",
    );
    assert.notEqual(statusOf(upstream.id), "cancelled");
    assert.ok(!trainer.cancels.includes(upstream.id));
    assert.ok(!trainer.deletedFiles.includes(upstream.file));
  });

  test("is left alone when the job ended otherwise (succeeded, or cancelled by its own route)", async () => {
    const upstream = await runningUpstreamJob();
    for (const state of ["JOB_STATE_SUCCEEDED", "JOB_STATE_CANCELLED"] as const) await abandon(upstream, () => state);
    assert.notEqual(statusOf(upstream.id), "cancelled");
    assert.ok(!trainer.cancels.includes(upstream.id));
  });
});
