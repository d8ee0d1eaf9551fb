/**
 * A trainable base declared in files only (catalogue and routing), trained by the
 * `openai-fine-tuning` upstream trainer against the fake OpenAI-format fine-tuning API
 * (test/support/fake-openai-fine-tuning.ts), over HTTP: the estimate and its egress, the
 * config mapping and the fields it refuses, the lifecycle to SUCCEEDED with the curve and
 * the bill from the upstream's trained tokens, the tuned model served by the upstream under
 * the account's name, cancel, an outage within and beyond its bound, a refused create, a
 * job the upstream loses or fails.
 */
import assert from "node:assert/strict";
import { afterAll, beforeAll, beforeEach, describe, test } from "vitest";
import { costMicros, formatMoney } from "../../server/store/money.ts";
import type { TestServer } from "../../harness/test-server.ts";
import { post } from "../server/http.ts";
import type { FakeFineTuning } from "../support/fake-openai-fine-tuning.ts";
import { assertError, INVALID_REQUEST, request } from "../support/http.ts";
import {
  PARTNER_AGREEMENT,
  RATE,
  UNREACHABLE_FOR_MS,
  UPSTREAM_BASE,
  startUpstreamTestServer,
  type UpstreamTestServer,
} from "./upstream-fixtures.ts";
import { ahoyPreferenceRows, ahoyRows, call, readyDataset, waitFor, waitForJob, type Caller } from "./fixtures.ts";

let upstream: UpstreamTestServer;
let trainer: FakeFineTuning;
let server: TestServer;
let acme: Caller;
let sft: string;
let dpo: string;
const ROWS = ahoyRows(24);

beforeAll(async () => {
  upstream = await startUpstreamTestServer("sk-upstream-trainer-secret", 10);
  ({ trainer, server } = upstream);
  acme = { server, account: "acme", key: server.keys.acme as string };
  sft = await readyDataset(acme, "ahoy", ROWS);
  dpo = await readyDataset(acme, "ahoy-pref", ahoyPreferenceRows(12));
});
afterAll(() => upstream?.close());
beforeEach(() => {
  trainer.outage = false;
  trainer.hold = false;
  trainer.holdAtStep = undefined;
  trainer.rejectCreate = undefined;
  trainer.failWith = undefined;
  trainer.loseNextCreateAnswer = false;
});

const sftBody = (outputModelId: string, config: Record<string, unknown> = {}) => ({
  baseModel: "accounts/maas/models/big-base",
  inputDatasetVersion: sft,
  config: { outputModelId, epochs: 2, ...config },
});
const create = async (body: object, collection = "supervisedFineTuningJobs") => {
  const created = await call(acme, "POST", `/${collection}`, body);
  assert.equal(created.status, 201, created.text);
  return created.body.jobId as string;
};
const balance = async () => (await server.store.accounts.get("acme"))?.balanceMicros as number;
/** The upstream job this server made for a job (by the metadata it tags it with). */
const upstreamJobOf = (jobId: string) =>
  trainer.jobs().find((j) => j.metadata?.maas_job === `accounts/acme/trainingJobs/${jobId}`);
const getJob = async (jobId: string, collection = "supervisedFineTuningJobs") =>
  (await call(acme, "GET", `/${collection}/${jobId}`)).body;
/** Says nothing of the provider: its URL, its key, its names for models and jobs. */
const assertNoProvider = (text: string) =>
  assert.doesNotMatch(text, /127\.0\.0\.1|vendor-base|ftjob-|ft:|fake-org|sk-upstream/i);
/** A stateDetail does not even name the API's vendor. */
const assertNoProviderDetail = (text: string) => {
  assertNoProvider(text);
  assert.doesNotMatch(text, /openai/i);
};

describe("the estimate of a base with an upstream trainer", () => {
  test("says the trainer is third-party, with the file's rate", async () => {
    const result = await call(acme, "POST", "/supervisedFineTuningJobs:estimateCost", sftBody("estimated"));
    assert.equal(result.status, 200, result.text);
    assert.deepEqual(result.body.estimate.ratePerMillion, { amount: RATE, currency: "USD" });
    assert.deepEqual(result.body.egress.execution, { thirdParty: true });
    assert.equal(result.body.egress.allowed, true);
    assert.equal(result.body.egress.providerApproved, true);
  });

  for (const [field, value] of [
    ["loraRank", 64],
    ["lrSchedule", "cosine"],
    ["warmupSteps", 5],
    ["earlyStop", true],
  ] as const) {
    test(`config.${field}, which the trainer cannot take, is 400 at estimate and create, and nothing goes upstream`, async () => {
      const before = trainer.jobs().length;
      for (const op of [":estimateCost", ""]) {
        const result = await call(
          acme,
          "POST",
          `/supervisedFineTuningJobs${op}`,
          sftBody(`refused-${field.toLowerCase()}`, { [field]: value }),
        );
        assertError(result, INVALID_REQUEST);
        assert.equal(result.body.error.param, `config.${field}`);
        assert.match(result.body.error.message, new RegExp(`config\\.${field} cannot be set for big-base`));
      }
      assert.equal(trainer.jobs().length, before);
    });
  }
});

describe("the agreement rule on a third-party trainer", () => {
  const partnerBody = () => ({ ...sftBody("partner-tuned"), baseModel: "accounts/maas/models/partner-base" });

  test("not accepted: the estimate says so in egress, the create is 403 AGREEMENT_REQUIRED, nothing leaves", async () => {
    const before = trainer.files.size;
    const estimate = await call(acme, "POST", "/supervisedFineTuningJobs:estimateCost", partnerBody());
    assert.equal(estimate.status, 200, estimate.text);
    const { egress } = estimate.body;
    assert.equal(egress.allowed, false);
    assert.equal(egress.reason.code, "AGREEMENT_REQUIRED");
    assert.deepEqual(egress.execution, { thirdParty: true });
    assert.equal(egress.providerApproved, false);
    assert.equal(egress.requiredAgreementVersion, PARTNER_AGREEMENT);
    const created = await call(acme, "POST", "/supervisedFineTuningJobs", partnerBody());
    assertError(created, { status: 403, code: "AGREEMENT_REQUIRED", type: "permission_error" });
    assert.equal(trainer.files.size, before, "no dataset was uploaded");
  });

  test("accepted: allowed and approved", async () => {
    await server.store.accounts.update("globex", { acceptedAgreementVersion: PARTNER_AGREEMENT });
    const globex: Caller = { server, account: "globex", key: server.keys.globex as string };
    const data = await readyDataset(globex, "ahoy", ROWS);
    const estimate = await call(globex, "POST", "/supervisedFineTuningJobs:estimateCost", {
      ...partnerBody(),
      inputDatasetVersion: data,
    });
    assert.equal(estimate.status, 200, estimate.text);
    assert.equal(estimate.body.egress.allowed, true);
    assert.equal(estimate.body.egress.providerApproved, true);
    assert.equal(estimate.body.egress.acceptedAgreementVersion, PARTNER_AGREEMENT);
  });
});

test("config.maxContextLength beyond the base's own limit is 400; within it, longer examples are skipped before the upload", async () => {
  const over = await call(
    acme,
    "POST",
    "/supervisedFineTuningJobs:estimateCost",
    sftBody("too-long", { maxContextLength: 8192 }),
  );
  assertError(over, INVALID_REQUEST);
  assert.equal(over.body.error.param, "config.maxContextLength");
  assert.match(over.body.error.message, /at most 4096 for big-base/);
  // Half the rows get a long answer that does not fit 64 tokens.
  const rows = ahoyRows(8).map((row: any, i) =>
    i % 2 === 0 ? row : { messages: [row.messages[0], { role: "assistant", content: "Ahoy! ".repeat(60) }] },
  );
  const data = await readyDataset(acme, "half-long", rows);
  const body = { ...sftBody("short-only", { maxContextLength: 64, epochs: 1 }), inputDatasetVersion: data };
  const estimate = await call(acme, "POST", "/supervisedFineTuningJobs:estimateCost", body);
  assert.equal(estimate.status, 200, estimate.text);
  assert.equal(estimate.body.estimate.examplesSkipped, "4");
  const jobId = await create(body);
  const { job } = await waitForJob(acme, "supervisedFineTuningJobs", jobId, 60_000);
  assert.equal(job.state, "JOB_STATE_SUCCEEDED", JSON.stringify(job));
  assert.equal(job.execution.examplesSkipped, "4");
  assert.equal(job.execution.examplesTrained, "4");
  const sent =
    trainer.files
      .get(upstreamJobOf(jobId)?.training_file as string)
      ?.content.trim()
      .split("\n") ?? [];
  assert.deepEqual(
    sent.map((l) => JSON.parse(l)),
    rows.filter((_, i) => i % 2 === 0),
  );
});

describe("a job on the upstream trainer", () => {
  let jobId: string;
  let job: any;
  let charged: number;
  const progressSeen: { percent: number; processedTokens: string }[] = [];

  beforeAll(async () => {
    const before = await balance();
    // Held at step 5 of 12 until the server has shown it: mid-run progress is seen however busy the machine.
    trainer.holdAtStep = 5;
    jobId = await create(sftBody("ahoy-upstream", { epochs: 2, batchSize: 4, learningRate: "0.0004" }));
    job = await waitFor(
      async () => {
        const now = await getJob(jobId);
        progressSeen.push(now.progress);
        if (now.progress.percent > 0) trainer.holdAtStep = undefined;
        return ["JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED"].includes(now.state) ? now : undefined;
      },
      60_000,
      10,
    );
    charged = await waitFor(async () => {
      const now = await balance();
      return now !== before ? before - now : undefined;
    }, 5_000);
  });

  test("succeeds, through RUNNING and FINALIZING, with the trainer named in execution", () => {
    assert.equal(job.state, "JOB_STATE_SUCCEEDED", JSON.stringify(job));
    assert.equal(job.execution.trainer, "openai-fine-tuning");
    assert.equal(job.progress.percent, 100);
    assert.equal(job.outputModel, "accounts/acme/models/ahoy-upstream");
    assert.equal(job.execution.examplesTrained, String(ROWS.length));
    assertNoProvider(JSON.stringify(job));
  });

  test("sent the dataset's rows as the training file and the config mapped to hyperparameters", () => {
    const upstream = upstreamJobOf(jobId);
    assert.ok(upstream, "one upstream job, tagged with the job's name");
    assert.equal(trainer.jobs().filter((j) => j.metadata?.maas_job === upstream.metadata?.maas_job).length, 1);
    assert.equal(upstream.model, UPSTREAM_BASE);
    assert.deepEqual(upstream.hyperparameters, { n_epochs: 2, batch_size: 4, learning_rate_multiplier: 2 });
    assert.equal(upstream.method?.type, "supervised");
    const file = trainer.files.get(upstream.training_file);
    assert.deepEqual(
      file?.content
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l)),
      ROWS,
    );
  });

  test("passed through CHECKPOINTING at the upstream's checkpoints: the last one's epoch and step are the job's", async () => {
    const record = await server.store.fineTuning.getJob("acme", "JOB_TYPE_SFT", jobId);
    const total = Math.ceil(ROWS.length / 4) * 2;
    // The fake checkpoints at each epoch's end; the last may come with the success itself.
    assert.ok(
      (record?.checkpointEpoch === 1 && record.checkpointStep === total / 2) ||
        (record?.checkpointEpoch === 2 && record.checkpointStep === total),
      JSON.stringify(record),
    );
  });

  test("while it ran, progress counted tokens as the estimate does; at the end, the upstream's count", async () => {
    const estimate = await call(acme, "POST", "/supervisedFineTuningJobs:estimateCost", {
      ...sftBody("never-made", { epochs: 2, batchSize: 4, learningRate: "0.0004" }),
    });
    const estimated = Number(estimate.body.estimate.tokensProcessed);
    const midRun = progressSeen.filter((p) => p.percent > 0 && p.percent < 100);
    assert.ok(midRun.length > 0, "progress was seen mid-run");
    for (const p of midRun) {
      const share = Number(p.processedTokens) / estimated;
      // 99 % at most while running, even once every step's tokens are counted.
      const below = p.percent === 99 ? share <= 1 : share < (p.percent + 1) / 100;
      assert.ok(share >= p.percent / 100 && below, JSON.stringify({ p, estimated }));
    }
  });

  test("bills the tokens the upstream reports trained, at the file's rate", () => {
    const upstream = upstreamJobOf(jobId);
    const trained = upstream?.trained_tokens as number;
    assert.ok(trained > 0);
    assert.equal(job.progress.processedTokens, String(trained));
    assert.equal(charged, costMicros(RATE, trained));
    // The job shows the bill the balance moved by, as a job trained here does.
    assert.equal(job.execution.billedTokens, String(trained));
    assert.deepEqual(job.execution.billedCost, { amount: formatMoney(charged), currency: "USD" });
  });

  test("its training curve is the upstream's step metrics, every step once", async () => {
    const curve = await call(acme, "GET", `/supervisedFineTuningJobs/${jobId}/metrics?maxPoints=10000`);
    assert.equal(curve.status, 200, curve.text);
    const steps = curve.body.points.map((p: any) => Number(p.step));
    const total = Math.ceil(ROWS.length / 4) * 2;
    assert.deepEqual(
      steps,
      Array.from({ length: total }, (_, i) => i + 1),
    );
    assert.equal(curve.body.points.at(-1).epoch, 2);
    assert.ok(curve.body.points[0].loss > curve.body.points.at(-1).loss, "the loss fell");
  });

  test("the tuned model is served by the upstream under the account's own name", async () => {
    const before = trainer.completions.length;
    const result = await post(
      server.baseUrl,
      "/responses",
      { model: "accounts/acme/models/ahoy-upstream", input: "Hello!", store: false, max_output_tokens: 32 },
      { key: acme.key },
    );
    assert.equal(result.status, 200, result.text);
    assert.equal(result.body.model, "accounts/acme/models/ahoy-upstream");
    assert.equal(result.body.output[0].content[0].text, "Ahoy from the tuned upstream model.");
    assert.deepEqual(trainer.completions.slice(before), [upstreamJobOf(jobId)?.fine_tuned_model]);
    assertNoProvider(result.text);
    const models = await request(`${server.baseUrl}/models`, { key: acme.key });
    assert.ok(models.body.data.some((m: { id: string }) => m.id === "accounts/acme/models/ahoy-upstream"));
  });

  test("its uploaded rows are deleted at the trainer once it succeeded", async () => {
    const file = upstreamJobOf(jobId)?.training_file as string;
    await waitFor(async () => (trainer.deletedFiles.includes(file) ? true : undefined), 10_000);
  });

  test("the base model itself is served by its inference upstream", async () => {
    const result = await post(
      server.baseUrl,
      "/responses",
      { model: "big-base", input: "Hello!", store: false, max_output_tokens: 32 },
      { key: acme.key },
    );
    assert.equal(result.status, 200, result.text);
    assert.equal(result.body.output[0].content[0].text, "The base model answers.");
  });
});

test("a DPO job goes upstream as method dpo with beta", async () => {
  const jobId = await create(
    {
      baseModel: "accounts/maas/models/big-base",
      inputDatasetVersion: dpo,
      config: { outputModelId: "ahoy-dpo", epochs: 1, dpoBeta: "0.2" },
    },
    "dpoJobs",
  );
  const { job } = await waitForJob(acme, "dpoJobs", jobId, 60_000);
  assert.equal(job.state, "JOB_STATE_SUCCEEDED", JSON.stringify(job));
  const upstream = upstreamJobOf(jobId);
  assert.equal(upstream?.method?.type, "dpo");
  const sent = JSON.parse(trainer.files.get(upstream?.training_file as string)?.content.split("\n")[0] as string);
  assert.ok(Array.isArray(sent.preferred_output) && Array.isArray(sent.non_preferred_output));
});

test("cancel: the upstream job is cancelled too, and nothing is billed", async () => {
  trainer.hold = true;
  const before = await balance();
  const jobId = await create(sftBody("cancelled-upstream"));
  const upstream = await waitFor(async () => {
    const found = upstreamJobOf(jobId);
    return found?.status === "running" ? found : undefined;
  });
  const cancelled = await call(acme, "POST", `/supervisedFineTuningJobs/${jobId}:cancel`);
  assert.equal(cancelled.status, 200, cancelled.text);
  await waitFor(async () => (trainer.cancels.includes(upstream.id) ? true : undefined), 10_000);
  assert.equal(upstreamJobOf(jobId)?.status, "cancelled");
  assert.equal((await getJob(jobId)).state, "JOB_STATE_CANCELLED");
  assert.equal(await balance(), before);
  await waitFor(async () => (trainer.deletedFiles.includes(upstream.training_file) ? true : undefined), 10_000);
});

describe("failures", () => {
  test("an outage shorter than the bound: the job waits RUNNING, then succeeds", async () => {
    trainer.hold = true;
    const before = await balance();
    const jobId = await create(sftBody("through-outage", { epochs: 1 }));
    await waitFor(async () => (upstreamJobOf(jobId)?.status === "running" ? true : undefined));
    trainer.outage = true;
    await new Promise((resolve) => setTimeout(resolve, UNREACHABLE_FOR_MS / 2));
    assert.equal((await getJob(jobId)).state, "JOB_STATE_RUNNING");
    trainer.outage = false;
    trainer.hold = false;
    const { job } = await waitForJob(acme, "supervisedFineTuningJobs", jobId, 30_000);
    assert.equal(job.state, "JOB_STATE_SUCCEEDED", JSON.stringify(job));
    // Billed once it succeeded; the charge is written just after the state, so it is awaited
    // here, not left to land in the next test's balance.
    await waitFor(async () => ((await balance()) < before ? true : undefined), 5_000);
  });

  test("an outage past the bound: FAILED INTERNAL, a stateDetail that names no provider, not billed", async () => {
    const before = await balance();
    trainer.hold = true;
    const jobId = await create(sftBody("lost-to-outage", { epochs: 1 }));
    const upstream = await waitFor(async () => {
      const found = upstreamJobOf(jobId);
      return found?.status === "running" ? found : undefined;
    });
    trainer.outage = true;
    const { job } = await waitForJob(acme, "supervisedFineTuningJobs", jobId, 30_000);
    assert.equal(job.state, "JOB_STATE_FAILED");
    assert.equal(job.errorClass, "INTERNAL");
    assert.match(job.stateDetail, /could not be reached/);
    assertNoProviderDetail(job.stateDetail);
    assert.equal(await balance(), before);
    // Back again: the upstream job of a job failed here is cancelled, not left training (and billing the operator).
    trainer.outage = false;
    await waitFor(async () => (trainer.cancels.includes(upstream.id) ? true : undefined), UNREACHABLE_FOR_MS * 2);
    assert.equal(upstreamJobOf(jobId)?.status, "cancelled");
    await waitFor(async () => (trainer.deletedFiles.includes(upstream.training_file) ? true : undefined), 5_000);
  });

  test("the upstream refuses the create (4xx): FAILED with the mapped class before any charge", async () => {
    const before = await balance();
    const upstreamJobs = trainer.jobs().length;
    trainer.rejectCreate = {
      status: 400,
      code: "invalid_training_file",
      param: "training_file",
      message: "OpenAI-style vendor says the file at 127.0.0.1 is bad",
    };
    const jobId = await create(sftBody("refused-upstream", { epochs: 1 }));
    const { job } = await waitForJob(acme, "supervisedFineTuningJobs", jobId, 30_000);
    assert.equal(job.state, "JOB_STATE_FAILED");
    assert.equal(job.errorClass, "INVALID_DATA");
    const uploaded = [...trainer.files.values()].find((f) => f.object.filename === `${jobId}-train.jsonl`)?.object.id;
    assert.ok(uploaded, "the rows were uploaded before the create was refused");
    assert.match(job.stateDetail, /refused the training data \(invalid_training_file, training_file\)/);
    assertNoProviderDetail(job.stateDetail);
    assert.equal(trainer.jobs().length, upstreamJobs);
    assert.equal(await balance(), before);
    // The rows it had uploaded before the refusal do not stay there.
    await waitFor(async () => (trainer.deletedFiles.includes(uploaded as string) ? true : undefined), 5_000);
  });

  test("a create whose answer is lost: the retry finds the job it made, and no second one is created", async () => {
    trainer.loseNextCreateAnswer = true;
    const jobId = await create(sftBody("answer-lost", { epochs: 1 }));
    const { job } = await waitForJob(acme, "supervisedFineTuningJobs", jobId, 30_000);
    assert.equal(job.state, "JOB_STATE_SUCCEEDED", JSON.stringify(job));
    assert.equal(trainer.loseNextCreateAnswer, false, "the answer was lost");
    assert.equal(
      trainer.jobs().filter((j) => j.metadata?.maas_job === `accounts/acme/trainingJobs/${jobId}`).length,
      1,
    );
  });

  test("a job the upstream loses: FAILED, never stuck", async () => {
    trainer.hold = true;
    const jobId = await create(sftBody("lost-upstream", { epochs: 1 }));
    const upstream = await waitFor(async () => upstreamJobOf(jobId));
    trainer.lose(upstream.id);
    const { job } = await waitForJob(acme, "supervisedFineTuningJobs", jobId, 30_000);
    assert.equal(job.state, "JOB_STATE_FAILED");
    assert.equal(job.errorClass, "INTERNAL");
    assert.match(job.stateDetail, /lost the job/);
  });

  test("a job the upstream fails on its data: FAILED INVALID_DATA", async () => {
    trainer.failWith = { code: "invalid_training_file", param: "training_file", message: "bad rows" };
    const jobId = await create(sftBody("failed-upstream", { epochs: 1 }));
    const { job } = await waitForJob(acme, "supervisedFineTuningJobs", jobId, 30_000);
    assert.equal(job.state, "JOB_STATE_FAILED");
    assert.equal(job.errorClass, "INVALID_DATA");
    assertNoProviderDetail(job.stateDetail);
  });
});
