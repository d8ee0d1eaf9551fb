/**
 * Fine-tuning jobs over HTTP against the whole server: estimate, create, the state
 * machine with real training, the resulting model served through /v1/responses, cancel,
 * idempotency, collections, paging and the training curve.
 */
import assert from "node:assert/strict";
import { afterAll, beforeAll, describe, test } from "vitest";
import { formatMoney, costMicros } from "../../server/store/money.ts";
import { exampleTokens } from "../../server/finetune/trainer.ts";
import { checkRow } from "../../server/datasets/rows.ts";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";
import { post } from "../server/http.ts";
import { assertError, INVALID_REQUEST, NOT_FOUND } from "../support/http.ts";
import { ahoyPreferenceRows, ahoyRows, call, readyDataset, waitFor, waitForJob, type Caller } from "./fixtures.ts";

let server: TestServer;
let acme: Caller;
let sftData: string;
let dpoData: string;
const SFT_ROWS = ahoyRows(200);

beforeAll(async () => {
  server = await startTestServer({ fineTuning: { pollMs: 20 } });
  acme = { server, account: "acme", key: server.keys.acme as string };
  sftData = await readyDataset(acme, "ahoy", SFT_ROWS);
  dpoData = await readyDataset(acme, "ahoy-pref", ahoyPreferenceRows(120));
});
afterAll(() => server.close());

// One epoch unless a test asks for more: the jobs these tests create need not teach anything, and they queue behind each other.
const sftBody = (outputModelId: string, extra: Record<string, unknown> = {}) => ({
  baseModel: "accounts/maas/models/tiny-chat",
  inputDatasetVersion: sftData,
  config: { outputModelId, epochs: 1, ...extra },
});
const ask = async (model: string, input: string) => {
  const result = await post(
    server.baseUrl,
    "/responses",
    { model, input, store: false, temperature: 0, max_output_tokens: 24 },
    { key: acme.key },
  );
  assert.equal(result.status, 200, result.text);
  return result.body.output[0].content[0].text as string;
};

describe("estimate", () => {
  test("shows its working, matching the file, and creates nothing", async () => {
    const result = await call(
      acme,
      "POST",
      "/supervisedFineTuningJobs:estimateCost",
      sftBody("never-made", { epochs: 3 }),
    );
    assert.equal(result.status, 200, result.text);
    const tokens = SFT_ROWS.map((r) => exampleTokens((checkRow(JSON.stringify(r)) as any).parsed)).reduce(
      (a, b) => a + b,
      0,
    );
    const { estimate, egress } = result.body;
    assert.equal(estimate.exampleCount, "200");
    assert.equal(estimate.examplesSkipped, "0");
    assert.equal(estimate.epochs, 3);
    assert.equal(estimate.avgTokensPerExample, (tokens / 200).toFixed(2));
    assert.equal(estimate.tokensPerEpoch, String(tokens));
    assert.equal(estimate.tokensProcessed, String(tokens * 3));
    assert.deepEqual(estimate.ratePerMillion, { amount: "0.50", currency: "USD" });
    assert.deepEqual(estimate.estimatedCost, { amount: formatMoney(costMicros("0.50", tokens * 3)), currency: "USD" });
    assert.deepEqual(egress, {
      allowed: true,
      execution: { thirdParty: false },
      providerApproved: true,
      requiredAgreementVersion: "",
      acceptedAgreementVersion: "community-license-2026-01",
    });
    const list = await call(acme, "GET", "/supervisedFineTuningJobs?filter=state:QUEUED");
    assert.equal(
      list.body.supervisedFineTuningJobs.some((j: any) => j.config.outputModelId === "never-made"),
      false,
    );
  });

  test("without epochs the estimate shows the default chosen for the dataset's size: 80 steps of 4 over 200 rows are 2 epochs", async () => {
    const body = sftBody("never-made");
    delete (body.config as { epochs?: number }).epochs;
    const result = await call(acme, "POST", "/supervisedFineTuningJobs:estimateCost", body);
    assert.equal(result.status, 200, result.text);
    assert.equal(result.body.estimate.epochs, 2);
  });

  test("examples longer than maxContextLength are skipped and counted, never truncated", async () => {
    const long = {
      messages: [
        { role: "user", content: "word ".repeat(400) },
        { role: "assistant", content: "Ahoy." },
      ],
    };
    const data = await readyDataset(acme, "with-long-rows", [...ahoyRows(10), long, long]);
    const result = await call(acme, "POST", "/supervisedFineTuningJobs:estimateCost", {
      baseModel: "accounts/maas/models/tiny-chat",
      inputDatasetVersion: data,
      config: { outputModelId: "x" },
    });
    assert.equal(result.body.estimate.exampleCount, "12");
    assert.equal(result.body.estimate.examplesSkipped, "2");
  });

  test("a row of about 130k tokens is an example that does not fit, not a 500", async () => {
    const huge = {
      messages: [
        { role: "user", content: "word ".repeat(130_000) },
        { role: "assistant", content: "Ahoy." },
      ],
    };
    const data = await readyDataset(acme, "with-a-huge-row", [...ahoyRows(4), huge]);
    const body = {
      baseModel: "accounts/maas/models/tiny-chat",
      inputDatasetVersion: data,
      config: { outputModelId: "huge-row", epochs: 1 },
    };
    const estimate = await call(acme, "POST", "/supervisedFineTuningJobs:estimateCost", body);
    assert.equal(estimate.status, 200, estimate.text);
    assert.deepEqual([estimate.body.estimate.exampleCount, estimate.body.estimate.examplesSkipped], ["5", "1"]);
    const created = await call(acme, "POST", "/supervisedFineTuningJobs", body);
    assert.equal(created.status, 201, created.text);
    const { job } = await waitForJob(acme, "supervisedFineTuningJobs", created.body.jobId);
    assert.equal(job.state, "JOB_STATE_SUCCEEDED", JSON.stringify(job));
    assert.deepEqual([job.execution.examplesTrained, job.execution.examplesSkipped], ["4", "1"]);
  });
});

describe("an SFT job, end to end", () => {
  let job: any;
  let seen: string[];
  beforeAll(async () => {
    const created = await call(acme, "POST", "/supervisedFineTuningJobs", sftBody("ahoy-chat", { epochs: 2 }));
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.state, "JOB_STATE_QUEUED");
    assert.match(created.body.createdBy, /^keys\/key_/);
    ({ job, seen } = await waitForJob(acme, "supervisedFineTuningJobs", created.body.jobId));
  });

  test("moves QUEUED → RUNNING → … → SUCCEEDED with every field set", () => {
    assert.equal(job.state, "JOB_STATE_SUCCEEDED", JSON.stringify(job));
    assert.ok(["JOB_STATE_QUEUED", "JOB_STATE_RUNNING"].includes(seen[0] as string));
    for (const state of seen)
      assert.ok(
        [
          "JOB_STATE_QUEUED",
          "JOB_STATE_RUNNING",
          "JOB_STATE_CHECKPOINTING",
          "JOB_STATE_FINALIZING",
          "JOB_STATE_SUCCEEDED",
        ].includes(state),
      );
    assert.equal(job.name, `accounts/acme/trainingJobs/${job.jobId}`);
    assert.equal(job.outputModel, "accounts/acme/models/ahoy-chat");
    assert.deepEqual(job.progress.percent, 100);
    assert.equal(job.progress.totalEpochs, 2);
    assert.ok(Number(job.progress.processedTokens) > 0);
    assert.equal(job.execution.trainer, "local-lora");
    assert.equal(job.execution.examplesTrained, "200");
    assert.ok(Date.parse(job.startTime) <= Date.parse(job.completeTime));
    assert.deepEqual(
      Object.keys(job.config).sort(),
      [
        "batchSize",
        "earlyStop",
        "epochs",
        "evalAutoCarveoutBasisPoints",
        "learningRate",
        "loraRank",
        "lrSchedule",
        "maxContextLength",
        "outputModelId",
        "warmupSteps",
      ].sort(),
    );
  });

  test("the training curve has a real, falling loss; maxPoints thins keeping first and last", async () => {
    const curve = (await call(acme, "GET", `/supervisedFineTuningJobs/${job.jobId}/metrics`)).body;
    assert.equal(curve.complete, true);
    const losses = curve.points.map((p: any) => Number(p.loss));
    assert.equal(curve.points.length, Number(curve.totalPoints));
    assert.ok(losses.length >= 2);
    assert.ok((losses.at(-1) as number) < (losses[0] as number) * 0.7, `loss fell: ${losses[0]} → ${losses.at(-1)}`);
    const two = (await call(acme, "GET", `/supervisedFineTuningJobs/${job.jobId}/metrics?maxPoints=2`)).body;
    assert.deepEqual(two.points, [curve.points[0], curve.points.at(-1)]);
    const none = (await call(acme, "GET", `/supervisedFineTuningJobs/${job.jobId}/metrics?maxPoints=0`)).body;
    assert.deepEqual(none.points, []);
    assert.equal(none.totalPoints, curve.totalPoints);
  });

  test("the new model is listed for its account only, under its model and deployment names", async () => {
    const mine = await fetch(`${server.baseUrl}/models`, { headers: { authorization: `Bearer ${acme.key}` } }).then(
      (r) => r.json() as Promise<any>,
    );
    const ids = mine.data.map((m: any) => m.id);
    assert.ok(
      ids.includes("accounts/acme/models/ahoy-chat") && ids.includes("accounts/acme/deployments/ahoy-chat"),
      ids.join(),
    );
    const theirs = await fetch(`${server.baseUrl}/models`, {
      headers: { authorization: `Bearer ${server.keys.globex}` },
    }).then((r) => r.json() as Promise<any>);
    assert.ok(!theirs.data.some((m: any) => m.id.includes("ahoy-chat")));
    assertError(
      await post(
        server.baseUrl,
        "/responses",
        { model: "accounts/acme/models/ahoy-chat", input: "Hi", store: false },
        { key: server.keys.globex },
      ),
      { status: 404, code: "MODEL_NOT_FOUND", type: "not_found_error" },
    );
  });

  test("the tuned model answers in the direction of the data; the base does not", async () => {
    const prompt = "Hello! Tell me about the sea.";
    const base = await ask("tiny-chat", prompt);
    const tuned = await ask("accounts/acme/models/ahoy-chat", prompt);
    const deployed = await ask("accounts/acme/deployments/ahoy-chat", prompt);
    assert.doesNotMatch(base, /ahoy/i);
    assert.match(tuned, /ahoy/i);
    assert.equal(deployed, tuned);
  });

  test("the dataset's full view lists the job", async () => {
    const full = (await call(acme, "GET", "/datasets/ahoy?view=DATASET_VIEW_FULL")).body;
    assert.ok(full.jobs.some((j: any) => j.name === job.name && j.jobType === "JOB_TYPE_SFT"));
  });

  test("the same output model id again is 409 ALREADY_EXISTS, and the estimate says so first", async () => {
    const estimate = await call(acme, "POST", "/supervisedFineTuningJobs:estimateCost", sftBody("ahoy-chat"));
    assert.equal(estimate.status, 200, estimate.text);
    const created = await call(acme, "POST", "/supervisedFineTuningJobs", sftBody("ahoy-chat"));
    assertError(created, { status: 409, code: "ALREADY_EXISTS", type: "invalid_request_error" });
    assert.equal(estimate.body.egress.allowed, false);
    assert.deepEqual(estimate.body.egress.reason, { code: "ALREADY_EXISTS", message: created.body.error.message });
  });

  test("a succeeded job cannot be cancelled: 409 JOB_STATE_INVALID", async () => {
    assertError(await call(acme, "POST", `/supervisedFineTuningJobs/${job.jobId}:cancel`), {
      status: 409,
      code: "JOB_STATE_INVALID",
      type: "invalid_request_error",
    });
  });

  test("the job is reachable through its own collection only", async () => {
    assertError(await call(acme, "GET", `/dpoJobs/${job.jobId}`), NOT_FOUND);
    assertError(await call(acme, "POST", `/dpoJobs/${job.jobId}:cancel`), NOT_FOUND);
  });
});

describe("a DPO job", () => {
  test("trains on preference rows, and the tuned model moves toward the preferred answers", async () => {
    const created = await call(acme, "POST", "/dpoJobs", {
      baseModel: "accounts/maas/models/tiny-chat",
      inputDatasetVersion: dpoData,
      config: { outputModelId: "ahoy-dpo", epochs: 2 },
    });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.jobType, "JOB_TYPE_DPO");
    assert.equal(created.body.config.dpoBeta, "0.1");
    const { job } = await waitForJob(acme, "dpoJobs", created.body.jobId);
    assert.equal(job.state, "JOB_STATE_SUCCEEDED", JSON.stringify(job));
    const curve = (await call(acme, "GET", `/dpoJobs/${job.jobId}/metrics`)).body;
    const losses = curve.points.map((p: any) => Number(p.loss));
    assert.ok(Math.abs((losses[0] as number) - Math.log(2)) < 0.05, `DPO starts at log 2: ${losses[0]}`);
    assert.ok((losses.at(-1) as number) < (losses[0] as number), "the DPO loss fell");
  });

  test("a preference job on an SFT dataset, or an SFT job with dpoBeta, is 400", async () => {
    const wrong = await call(acme, "POST", "/dpoJobs", {
      baseModel: "accounts/maas/models/tiny-chat",
      inputDatasetVersion: sftData,
      config: { outputModelId: "nope" },
    });
    assertError(wrong, INVALID_REQUEST);
    assert.equal(wrong.body.error.param, "inputDatasetVersion");
    const beta = await call(acme, "POST", "/supervisedFineTuningJobs", sftBody("nope", { dpoBeta: "0.2" }));
    assertError(beta, INVALID_REQUEST);
    assert.equal(beta.body.error.param, "config.dpoBeta");
  });
});

describe("create: refusals", () => {
  test("unknown base model 404, a model not offered for training 400, another account's dataset 404", async () => {
    assertError(
      await call(acme, "POST", "/supervisedFineTuningJobs", {
        ...sftBody("x"),
        baseModel: "accounts/maas/models/no-such-model",
      }),
      { status: 404, code: "MODEL_NOT_FOUND", type: "not_found_error" },
    );
    const notOffered = await call(acme, "POST", "/supervisedFineTuningJobs", {
      ...sftBody("x"),
      baseModel: "accounts/maas/models/tiny-reasoner",
    });
    assertError(notOffered, INVALID_REQUEST);
    assert.equal(notOffered.body.error.param, "baseModel");
    const globex: Caller = { server, account: "globex", key: server.keys.globex as string };
    assertError(await call(globex, "POST", "/supervisedFineTuningJobs", sftBody("x")), NOT_FOUND);
  });

  test("baseModel is the full resource name accounts/maas/models/{model}: a bare id, or any other name, is 400 with param baseModel", async () => {
    for (const baseModel of [
      "tiny-chat",
      "accounts/acme/models/tiny-chat",
      "accounts/maas/models/",
      "accounts/maas/models/tiny-chat/extra",
      "models/tiny-chat",
    ]) {
      for (const path of [
        "/supervisedFineTuningJobs",
        "/supervisedFineTuningJobs:estimateCost",
        "/dpoJobs",
        "/dpoJobs:estimateCost",
      ]) {
        const result = await call(acme, "POST", path, { ...sftBody("bare"), baseModel });
        assertError(result, INVALID_REQUEST);
        assert.equal(result.body.error.param, "baseModel", `${path} ${baseModel}: ${result.text}`);
      }
    }
  });

  test("another account's path is 403; fine-tuning disabled is 403 OPERATION_NOT_ALLOWED", async () => {
    const intruder: Caller = { server, account: "acme", key: server.keys.globex as string };
    assertError(await call(intruder, "GET", "/supervisedFineTuningJobs"), {
      status: 403,
      code: "OPERATION_NOT_ALLOWED",
      type: "permission_error",
    });
    const hooli: Caller = { server, account: "hooli", key: server.keys.hooli as string };
    assertError(await call(hooli, "POST", "/supervisedFineTuningJobs", sftBody("x")), {
      status: 403,
      code: "OPERATION_NOT_ALLOWED",
      type: "permission_error",
    });
  });

  test("the estimate of a create that would be refused says allowed: false with the create's error", async () => {
    const hooli: Caller = { server, account: "hooli", key: server.keys.hooli as string };
    const data = await readyDataset(hooli, "hooli-ahoy", SFT_ROWS.slice(0, 10));
    const body = { ...sftBody("x"), inputDatasetVersion: data };
    const estimate = await call(hooli, "POST", "/supervisedFineTuningJobs:estimateCost", body);
    assert.equal(estimate.status, 200, estimate.text);
    const created = await call(hooli, "POST", "/supervisedFineTuningJobs", body);
    assertError(created, { status: 403, code: "OPERATION_NOT_ALLOWED", type: "permission_error" });
    assert.equal(estimate.body.egress.allowed, false);
    assert.deepEqual(estimate.body.egress.reason, {
      code: "OPERATION_NOT_ALLOWED",
      message: created.body.error.message,
    });
    // An allowed estimate has no reason.
    const fine = await call(acme, "POST", "/supervisedFineTuningJobs:estimateCost", sftBody("free-name"));
    assert.equal(fine.body.egress.allowed, true);
    assert.equal(fine.body.egress.reason, undefined);
  });

  test("a dataset that exists but has no upload yet is 400 not READY, not 404", async () => {
    assert.equal((await call(acme, "POST", "/datasets", { datasetId: "empty-one", dataset: {} })).status, 200);
    for (const op of [":estimateCost", ""]) {
      const result = await call(acme, "POST", `/supervisedFineTuningJobs${op}`, {
        ...sftBody("x"),
        inputDatasetVersion: "accounts/acme/datasets/empty-one",
      });
      assertError(result, INVALID_REQUEST);
      assert.equal(result.body.error.param, "inputDatasetVersion");
      assert.match(
        result.body.error.message,
        /not READY \(it is DATASET_STATE_CREATING\): no file has been uploaded yet/,
      );
    }
  });

  test("a learning rate outside (0, 1] is 400 with its param, on estimate and create", async () => {
    for (const learningRate of ["1e6", "0", "-0.1", "1.5"]) {
      for (const op of [":estimateCost", ""]) {
        const result = await call(acme, "POST", `/supervisedFineTuningJobs${op}`, sftBody("x", { learningRate }));
        assertError(result, INVALID_REQUEST);
        assert.equal(result.body.error.param, "config.learningRate");
      }
    }
    const beta = await call(acme, "POST", "/dpoJobs:estimateCost", {
      ...sftBody("x", { dpoBeta: "50" }),
      inputDatasetVersion: dpoData,
    });
    assertError(beta, INVALID_REQUEST);
    assert.equal(beta.body.error.param, "config.dpoBeta");
  });

  test("a job whose loss diverges ends FAILED with errorClass TRAINING_DIVERGED, not INTERNAL", async () => {
    const created = await call(
      acme,
      "POST",
      "/supervisedFineTuningJobs",
      sftBody("diverges", { learningRate: "1", epochs: 1 }),
    );
    assert.equal(created.status, 201, created.text);
    const { job } = await waitForJob(acme, "supervisedFineTuningJobs", created.body.jobId);
    assert.equal(job.state, "JOB_STATE_FAILED", JSON.stringify(job));
    assert.equal(job.errorClass, "TRAINING_DIVERGED");
    assert.match(job.stateDetail, /learningRate/);
    const curve = (await call(acme, "GET", `/supervisedFineTuningJobs/${job.jobId}/metrics`)).body;
    assert.ok(
      curve.points.every((p: any) => /^-?[0-9]+(\.[0-9]+)?$/.test(p.loss)),
      "every recorded loss is a plain decimal",
    );
  });
});

describe("idempotency", () => {
  test("the same key and body return the first job; another body is 409 IDEMPOTENCY_CONFLICT", async () => {
    const headers = { "idempotency-key": "retry-1" };
    const first = await call(acme, "POST", "/supervisedFineTuningJobs", sftBody("idem-1"), headers);
    const again = await call(acme, "POST", "/supervisedFineTuningJobs", sftBody("idem-1"), headers);
    assert.equal(first.status, 201);
    assert.equal(again.status, 201);
    assert.equal(again.body.name, first.body.name);
    assertError(await call(acme, "POST", "/supervisedFineTuningJobs", sftBody("idem-other"), headers), {
      status: 409,
      code: "IDEMPOTENCY_CONFLICT",
      type: "invalid_request_error",
    });
    await call(acme, "POST", `/supervisedFineTuningJobs/${first.body.jobId}:cancel`);
  });

  test("a retry gets the first job even after its dataset was deleted (found by the stateful fuzzer)", async () => {
    const data = await readyDataset(acme, "retry-then-deleted", ahoyRows(20));
    const body = {
      baseModel: "accounts/maas/models/tiny-chat",
      inputDatasetVersion: data,
      config: { outputModelId: "retry-deleted", epochs: 1 },
    };
    const headers = { "idempotency-key": "retry-after-delete" };
    const first = await call(acme, "POST", "/supervisedFineTuningJobs", body, headers);
    assert.equal(first.status, 201, first.text);
    await call(acme, "POST", `/supervisedFineTuningJobs/${first.body.jobId}:cancel`);
    const deleted = await call(acme, "DELETE", "/datasets/retry-then-deleted");
    assert.equal(deleted.status, 200, deleted.text);
    const again = await call(acme, "POST", "/supervisedFineTuningJobs", body, headers);
    assert.equal(again.status, 201, again.text);
    assert.equal(again.body.name, first.body.name);
    // Without the key the same body is planned again, and the dataset is gone.
    assertError(await call(acme, "POST", "/supervisedFineTuningJobs", body), NOT_FOUND);
  });

  test("concurrent duplicates create one job", async () => {
    const headers = { "idempotency-key": "burst-1" };
    const results = await Promise.all(
      Array.from({ length: 8 }, () => call(acme, "POST", "/supervisedFineTuningJobs", sftBody("burst"), headers)),
    );
    assert.deepEqual(new Set(results.map((r) => r.status)), new Set([201]));
    assert.equal(new Set(results.map((r) => r.body.name)).size, 1);
    await call(acme, "POST", `/supervisedFineTuningJobs/${results[0]?.body.jobId}:cancel`);
  });

  test("keys are per collection", async () => {
    const headers = { "idempotency-key": "shared-key" };
    const sft = await call(acme, "POST", "/supervisedFineTuningJobs", sftBody("per-coll-sft"), headers);
    const dpo = await call(
      acme,
      "POST",
      "/dpoJobs",
      {
        baseModel: "accounts/maas/models/tiny-chat",
        inputDatasetVersion: dpoData,
        config: { outputModelId: "per-coll-dpo", epochs: 1 },
      },
      headers,
    );
    assert.equal(sft.status, 201);
    assert.equal(dpo.status, 201, dpo.text);
    assert.notEqual(sft.body.name, dpo.body.name);
    await call(acme, "POST", `/supervisedFineTuningJobs/${sft.body.jobId}:cancel`);
    await call(acme, "POST", `/dpoJobs/${dpo.body.jobId}:cancel`);
  });
});

describe("cancel", () => {
  test("a running job stops and is CANCELLED; cancelling again is 409", async () => {
    const created = await call(acme, "POST", "/supervisedFineTuningJobs", sftBody("to-cancel", { epochs: 50 }));
    await waitFor(async () =>
      (await call(acme, "GET", `/supervisedFineTuningJobs/${created.body.jobId}`)).body.state === "JOB_STATE_RUNNING"
        ? true
        : undefined,
    );
    const cancelled = await call(acme, "POST", `/supervisedFineTuningJobs/${created.body.jobId}:cancel`);
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.equal(cancelled.body.state, "JOB_STATE_CANCELLED");
    assert.ok(cancelled.body.completeTime);
    assertError(await call(acme, "POST", `/supervisedFineTuningJobs/${created.body.jobId}:cancel`), {
      status: 409,
      code: "JOB_STATE_INVALID",
      type: "invalid_request_error",
    });
    // Training stopped: the curve does not grow any more once the runner has seen the cancel.
    const { job } = await waitForJob(acme, "supervisedFineTuningJobs", created.body.jobId);
    assert.equal(job.state, "JOB_STATE_CANCELLED");
    const idle = await waitFor(async () =>
      (await call(acme, "GET", "/supervisedFineTuningJobs?filter=state:RUNNING")).body.totalSize === 0
        ? true
        : undefined,
    );
    assert.ok(idle);
    const points = (await call(acme, "GET", `/supervisedFineTuningJobs/${created.body.jobId}/metrics`)).body
      .totalPoints;
    const later = (await call(acme, "GET", `/supervisedFineTuningJobs/${created.body.jobId}/metrics`)).body.totalPoints;
    assert.equal(later, points);
  });
});

describe("lists", () => {
  test("filter by state, in both spellings; a bad filter is 400", async () => {
    const short = (await call(acme, "GET", "/supervisedFineTuningJobs?filter=state:SUCCEEDED")).body;
    const long = (await call(acme, "GET", "/supervisedFineTuningJobs?filter=state:JOB_STATE_SUCCEEDED")).body;
    assert.ok(short.supervisedFineTuningJobs.length >= 1);
    assert.deepEqual(short, long);
    assert.ok(short.supervisedFineTuningJobs.every((j: any) => j.state === "JOB_STATE_SUCCEEDED"));
    const bad = await call(acme, "GET", "/supervisedFineTuningJobs?filter=colour:blue");
    assertError(bad, INVALID_REQUEST);
    assert.equal(bad.body.error.param, "filter");
  });
});
