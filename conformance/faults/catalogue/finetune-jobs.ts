/**
 * Faults that break the `finetune.*` rules of conformance/rules.yaml (one of four files of the
 * family, see finetune.ts). Training jobs: create (201, queued, createdBy), idempotency,
 * collections, cancel, the job resource's fields.
 */
import { randomBytes } from "node:crypto";
import { listAt, objectAt, objectsOf, stringAt } from "../json.ts";
import { isOperation, isAtPathOf, collectionOf, JOB_OPERATIONS } from "../operations.ts";
import type { Fault, ProxyRequest } from "../proxy.ts";
import { errorCode, replace, resend, jobsOf, isInt64String } from "./support.ts";

/** Requests whose Idempotency-Key the idempotency fault removed. */
const STRIPPED_KEYS = new WeakSet<ProxyRequest>();

export const finetuneJobFaults: Fault[] = [
  {
    id: "jobs.create-200",
    areas: ["finetune"],
    transcripts: ["limits/idempotency-key"],
    rule: "finetune.create",
    description: "Job creation answers 200 instead of 201.",
    match: (request) => isOperation(request, ...JOB_OPERATIONS.create),
    onResponse(response) {
      if (response.status !== 201) return;
      response.status = 200;
      return response;
    },
  },
  {
    id: "jobs.idempotency-key-ignored",
    areas: ["finetune"],
    transcripts: ["limits/idempotency-key"],
    rule: "finetune.idempotency",
    description: "Idempotency-Key is ignored: a retried create starts a second job with a new name.",
    match: (request) => isOperation(request, ...JOB_OPERATIONS.create),
    onRequest(request) {
      const key = request.headers["idempotency-key"];
      if (key === undefined) return;
      delete request.headers["idempotency-key"];
      STRIPPED_KEYS.add(request);
      return request;
    },
    async onResponse(response, request, ctx) {
      // The retry of a create whose first job still lives clashes on the output model id
      // (409 ALREADY_EXISTS) in the correct server; the implementation under test would
      // have made a second job, so make one under a fresh model id and show the one asked for.
      const wanted = stringAt(request.json, "config", "outputModelId");
      if (!STRIPPED_KEYS.has(request) || errorCode(response) !== "ALREADY_EXISTS" || !wanted) return;
      const json = structuredClone(objectAt(request.json) ?? {});
      json.config = {
        ...objectAt(json, "config"),
        outputModelId: `${wanted.slice(0, 50)}-${randomBytes(4).toString("hex")}`,
      };
      const second = await resend(ctx, request, { json });
      const secondConfig = objectAt(second.json, "config");
      if (second.status !== 201 || !secondConfig) return;
      secondConfig.outputModelId = wanted;
      return replace(second, 201, second.json);
    },
  },
  {
    id: "jobs.idempotency-conflict-ignored",
    areas: ["finetune"],
    transcripts: ["finetune/idempotency"],
    rule: "finetune.idempotency",
    description: "A reused Idempotency-Key with a different body returns the first job (201) instead of 409.",
    match: (request) => isOperation(request, ...JOB_OPERATIONS.create),
    onResponse(response, request, ctx) {
      const key = request.headers["idempotency-key"];
      if (key === undefined) return;
      const slot = `idem:${request.path}:${key}`;
      if (response.status === 201 && !ctx.state.has(slot)) ctx.state.set(slot, response.json);
      if (errorCode(response) !== "IDEMPOTENCY_CONFLICT" || !ctx.state.has(slot)) return;
      return replace(response, 201, ctx.state.get(slot));
    },
  },
  {
    id: "jobs.wrong-collection-found",
    areas: ["finetune"],
    transcripts: ["finetune/collections"],
    rule: "finetune.collections",
    description: "An SFT job is returned under dpoJobs (and back): the collection is not checked.",
    match: (request) => isAtPathOf(request, ...JOB_OPERATIONS.get, ...JOB_OPERATIONS.metrics, ...JOB_OPERATIONS.cancel),
    async onResponse(response, request, ctx) {
      if (response.status !== 404) return;
      const collection = collectionOf(request);
      const other = collection === "dpoJobs" ? "supervisedFineTuningJobs" : "dpoJobs";
      const found = await resend(ctx, request, { path: request.path.replace(`/${collection}/`, `/${other}/`) });
      if (found.status >= 400) return;
      return found;
    },
  },
  {
    id: "jobs.cancel-without-complete-time",
    areas: ["finetune"],
    transcripts: ["finetune/cancel-running"],
    rule: "finetune.cancel",
    description: "The cancel answer has state CANCELLED but no completeTime.",
    match: (request) => isOperation(request, ...JOB_OPERATIONS.cancel),
    onResponse(response) {
      const job = objectAt(response.json);
      if (response.status !== 200 || job?.completeTime === undefined) return;
      delete job.completeTime;
      return response;
    },
  },
  {
    id: "jobs.cancelled-not-billed",
    areas: ["finetune"],
    transcripts: ["finetune/cancel-running-sft"],
    rule: "finetune.billing",
    description:
      "A cancelled job is not billed: it shows billedTokens 0 and billedCost 0.00 however many tokens it trained before the cancel.",
    match: (request) => isOperation(request, ...JOB_OPERATIONS.cancel, ...JOB_OPERATIONS.get, ...JOB_OPERATIONS.list),
    onResponse(response) {
      const jobs = jobsOf(response).filter((job) => job.state === "JOB_STATE_CANCELLED");
      const billed = jobs.filter((job) => objectAt(job.execution)?.billedTokens !== "0");
      if (billed.length === 0) return;
      for (const job of billed) {
        const currency = stringAt(job, "execution", "billedCost", "currency") ?? "USD";
        job.execution = { ...objectAt(job.execution), billedTokens: "0", billedCost: { amount: "0.00", currency } };
      }
      return response;
    },
  },
  {
    id: "jobs.output-model-other-account",
    areas: ["finetune"],
    transcripts: ["finetune/dpo"],
    rule: "finetune.output-model",
    description: "outputModel is named under the platform account (accounts/maas/models/…) instead of the caller's.",
    onResponse(response) {
      const jobs = jobsOf(response).filter((job) => typeof job.outputModel === "string");
      if (jobs.length === 0) return;
      for (const job of jobs) job.outputModel = String(job.outputModel).replace(/^accounts\/[^/]+\//, "accounts/maas/");
      return response;
    },
  },
  {
    id: "jobs.created-by-is-the-key",
    areas: ["finetune"],
    transcripts: ["finetune/cancel-succeeded"],
    rule: "finetune.create",
    description: "createdBy carries the API key that created the job.",
    onResponse(response, request, ctx) {
      const key = ctx.keyOf(request);
      const jobs = jobsOf(response).filter((job) => typeof job.createdBy === "string");
      if (jobs.length === 0 || key === undefined) return;
      for (const job of jobs) job.createdBy = `keys/${key}`;
      return response;
    },
  },
  {
    id: "jobs.collections-mixed",
    areas: ["finetune"],
    transcripts: ["finetune/collections"],
    rule: "finetune.list",
    description: "The supervisedFineTuningJobs list also holds the account's DPO jobs.",
    match: (request) => isOperation(request, "listSupervisedFineTuningJobs"),
    async onResponse(response, request, ctx) {
      const items = listAt(response.json, "supervisedFineTuningJobs");
      if (response.status !== 200 || !items) return;
      const dpo = await resend(ctx, request, { path: request.path.replace(/supervisedFineTuningJobs$/, "dpoJobs") });
      const extra = listAt(dpo.json, "dpoJobs") ?? [];
      if (extra.length === 0) return;
      items.push(...extra);
      return response;
    },
  },
  {
    id: "jobs.total-epochs-not-config",
    areas: ["finetune"],
    transcripts: ["finetune/cancel-succeeded"],
    rule: "finetune.get",
    description: "progress.totalEpochs is always 1, whatever config.epochs says.",
    onResponse(response) {
      const progresses = objectsOf(jobsOf(response).map((job) => job.progress)).filter(
        (progress) => progress.totalEpochs !== 1,
      );
      if (progresses.length === 0) return;
      for (const progress of progresses) progress.totalEpochs = 1;
      return response;
    },
  },
  {
    id: "jobs.complete-before-start",
    areas: ["finetune"],
    transcripts: ["finetune/cancel-succeeded"],
    rule: "finetune.get",
    description: "completeTime is a second before startTime (a clock from another host).",
    onResponse(response) {
      const jobs = jobsOf(response).filter((job) => job.completeTime !== undefined && job.startTime !== undefined);
      if (jobs.length === 0) return;
      for (const job of jobs) job.completeTime = new Date(Date.parse(String(job.startTime)) - 1000).toISOString();
      return response;
    },
  },
  {
    id: "jobs.base-model-wrong",
    areas: ["finetune"],
    rule: "finetune.get",
    description: "The job names another base model than the one it tunes (accounts/maas/models/tiny-reasoner-v0).",
    onResponse(response) {
      const jobs = jobsOf(response).filter((job) => typeof job.baseModel === "string");
      if (jobs.length === 0) return;
      for (const job of jobs) job.baseModel = "accounts/maas/models/tiny-reasoner-v0";
      return response;
    },
  },
  {
    id: "jobs.evaluation-dataset-dropped",
    areas: ["finetune"],
    transcripts: ["finetune/evaluation"],
    rule: "finetune.evaluation",
    description: "Jobs never name their evaluationDatasetVersion.",
    onResponse(response) {
      const jobs = jobsOf(response).filter((job) => job.evaluationDatasetVersion !== undefined);
      if (jobs.length === 0) return;
      for (const job of jobs) delete job.evaluationDatasetVersion;
      return response;
    },
  },
  {
    id: "jobs.int64-as-number",
    areas: ["finetune"],
    transcripts: ["limits/page-size"],
    rule: "finetune.get",
    description: "progress.processedTokens is a JSON number.",
    onResponse(response) {
      const progresses = objectsOf(jobsOf(response).map((job) => job.progress)).filter((progress) =>
        isInt64String(progress.processedTokens),
      );
      if (progresses.length === 0) return;
      for (const progress of progresses) progress.processedTokens = Number(progress.processedTokens);
      return response;
    },
  },
  {
    id: "jobs.undeclared-field",
    areas: ["finetune"],
    transcripts: ["limits/page-size"],
    rule: "finetune.get",
    description: 'Every job carries an extra field ("priority").',
    onResponse(response) {
      const jobs = jobsOf(response);
      if (jobs.length === 0) return;
      for (const job of jobs) job.priority = "normal";
      return response;
    },
  },
  {
    id: "jobs.dpo-beta-on-sft-accepted",
    areas: ["finetune"],
    transcripts: ["finetune/create-errors"],
    rule: "finetune.dpo",
    description: "config.dpoBeta on an SFT request is dropped silently instead of rejected.",
    match: (request) => isOperation(request, "createSupervisedFineTuningJob", "estimateSupervisedFineTuningJobCost"),
    onRequest(request) {
      const config = objectAt(request.json, "config");
      if (config?.dpoBeta === undefined) return;
      delete config.dpoBeta;
      return request;
    },
  },
  {
    id: "finetune.bare-base-model-accepted",
    areas: ["finetune"],
    transcripts: ["finetune/create-errors"],
    rule: "finetune.base-model",
    description: "A bare model id (tiny-chat) is taken as the platform model's full name.",
    // The estimate only, so that no job is started.
    match: (request) => isOperation(request, ...JOB_OPERATIONS.estimate),
    onRequest(request) {
      const json = objectAt(request.json);
      const baseModel = json?.baseModel;
      if (!json || typeof baseModel !== "string" || baseModel.includes("/")) return;
      json.baseModel = `accounts/maas/models/${baseModel}`;
      return request;
    },
  },
];
