/**
 * The job operations of both collections, `supervisedFineTuningJobs` (SFT) and `dpoJobs`
 * (DPO): estimate, create, list, get, cancel, metrics. A job is reachable only through
 * the collection of its type; through the other it is 404 NOT_FOUND.
 */
import { createHash, randomBytes } from "node:crypto";
import type { Request, Response } from "express";
import type { components } from "../../generated/api.d.ts";
import { enums, type OperationId } from "../../generated/contract-values.ts";
import { ApiError } from "../api-error.ts";
import { integerQuery, listBinding, parseStateFilter, readPageToken, writePageToken } from "../http/list-paging.ts";
import type { OperationHandlers } from "../http/operation-routes.ts";
import { requireFineTuningEnabled } from "../http/permissions.ts";
import { CANCELLABLE_STATES, type JobRecord, type JobType } from "../store/fine-tuning.ts";
import type { Store } from "../store/store.ts";
import { platformModelName } from "../inference/catalog.ts";
import { jobBill } from "./billing.ts";
import { costEstimate, planJob, type JobPlan, type TrainingJobRequest } from "./plan.ts";
import { toCurve, toTrainingJob } from "./wire.ts";

export interface JobRouteDeps {
  store: Store;
  /** Tells the runner a job is waiting. */
  wake(): void;
  /** Stops the job at once if this process is training it. */
  cancelled(accountId: string, jobId: string): void;
}

type TrainingJob = components["schemas"]["TrainingJob"];

interface Collection {
  jobType: JobType;
  /** The operationId prefix and suffix of the collection's operations. */
  ids: Record<"estimate" | "create" | "list" | "get" | "cancel" | "metrics", OperationId>;
  listKey: "supervisedFineTuningJobs" | "dpoJobs";
  idPrefix: string;
}

// `as const`: each of `ids` is the union of the two collections' ids, so a handler gets their types.
const COLLECTIONS = [
  {
    jobType: "JOB_TYPE_SFT",
    listKey: "supervisedFineTuningJobs",
    idPrefix: "sft",
    ids: {
      estimate: "estimateSupervisedFineTuningJobCost",
      create: "createSupervisedFineTuningJob",
      list: "listSupervisedFineTuningJobs",
      get: "getSupervisedFineTuningJob",
      cancel: "cancelSupervisedFineTuningJob",
      metrics: "getSupervisedFineTuningJobMetrics",
    },
  },
  {
    jobType: "JOB_TYPE_DPO",
    listKey: "dpoJobs",
    idPrefix: "dpo",
    ids: {
      estimate: "estimateDpoJobCost",
      create: "createDpoJob",
      list: "listDpoJobs",
      get: "getDpoJob",
      cancel: "cancelDpoJob",
      metrics: "getDpoJobMetrics",
    },
  },
] as const satisfies readonly Collection[];

export function registerJobRoutes(handlers: OperationHandlers, deps: JobRouteDeps): void {
  for (const collection of COLLECTIONS) {
    const { ids, jobType } = collection;
    handlers.on(ids.estimate, async (req, res) => {
      const plan = await planJob(deps.store, res.locals.caller.account, jobType, req.body);
      res.json(costEstimate(plan));
    });
    handlers.on(ids.create, (req, res) => createJob(req, res, deps, collection));
    handlers.on(ids.list, (req, res, params) => listJobs(req, res, deps.store, collection, params.account));
    handlers.on(ids.get, async (_req, res, params) => {
      res.json(toTrainingJob(await requireJob(deps.store, collection, params)));
    });
    handlers.on(ids.cancel, async (_req, res, params) => {
      const job = await requireJob(deps.store, collection, params);
      const patch = {
        state: "JOB_STATE_CANCELLED" as const,
        completeTime: new Date(),
        stateDetail: "Cancelled by request.",
      };
      // Billed for what it trained before the cancel, in the cancel's transaction (billing.ts).
      const cancelled = await deps.store.fineTuning.updateJob(
        job.accountId,
        job.jobId,
        patch,
        CANCELLABLE_STATES,
        undefined,
        jobBill(job),
      );
      if (cancelled === undefined) {
        const now = (await requireJob(deps.store, collection, params)).state;
        throw new ApiError("JOB_STATE_INVALID", cancelRefusal(now));
      }
      deps.cancelled(job.accountId, job.jobId);
      res.json(toTrainingJob(cancelled));
    });
    handlers.on(ids.metrics, async (req, res, params) => {
      const job = await requireJob(deps.store, collection, params);
      const maxPoints = integerQuery(req.query.maxPoints, "maxPoints", 1000);
      const [training, evaluation] = await Promise.all([
        deps.store.fineTuning.readCurve(job.accountId, job.jobId, "training"),
        deps.store.fineTuning.readCurve(job.accountId, job.jobId, "evaluation"),
      ]);
      res.json(toCurve(job, training, evaluation, maxPoints));
    });
  }
}

/** Why a cancel was refused: only QUEUED and RUNNING jobs can be cancelled (the interface document). */
function cancelRefusal(state: JobRecord["state"]): string {
  const rule = "only QUEUED and RUNNING jobs can be cancelled";
  return state === "JOB_STATE_CHECKPOINTING"
    ? `The job is saving a checkpoint (JOB_STATE_CHECKPOINTING) and cannot be cancelled now; ${rule}. It is RUNNING again in a moment: cancel then.`
    : `A job in ${state} cannot be cancelled; ${rule}.`;
}

async function createJob(
  req: Request<Record<string, string>, TrainingJob, TrainingJobRequest>,
  res: Response<TrainingJob>,
  deps: JobRouteDeps,
  collection: Collection,
): Promise<void> {
  const { account, keyId } = res.locals.caller;
  const body = req.body;
  requireFineTuningEnabled(account);
  const key = req.header("idempotency-key");
  const idempotency = key === undefined ? undefined : { key, requestHash: requestHash(body) };
  // A retry is answered with the first job before anything is planned again: the dataset may
  // have been deleted or the balance spent since, and the retry must still see its job.
  const earlier =
    idempotency && (await deps.store.fineTuning.findIdempotentJob(account.id, collection.jobType, idempotency));
  if (earlier) {
    res.status(201).json(toTrainingJob(earlier));
    return;
  }
  const plan = await planJob(deps.store, account, collection.jobType, body);
  // The estimate's egress decision, so the two cannot disagree. A taken output model id is left to the store,
  // which checks it in one transaction with the Idempotency-Key: a retried create returns the first job.
  if (plan.refusal && plan.refusal.code !== "ALREADY_EXISTS") throw plan.refusal;
  const { job, created } = await deps.store.fineTuning.createJob(
    newJob(account.id, `keys/${keyId}`, collection, plan),
    idempotency,
  );
  if (created) deps.wake();
  res.status(201).json(toTrainingJob(job));
}

function newJob(accountId: string, createdBy: string, collection: Collection, plan: JobPlan): JobRecord {
  return {
    accountId,
    jobId: `${collection.idPrefix}-${randomBytes(8).toString("hex")}`,
    jobType: collection.jobType,
    state: "JOB_STATE_QUEUED",
    // The contract's job field is the full resource name of the base model.
    baseModel: platformModelName(plan.base.id),
    inputDatasetVersion: plan.input.name,
    ...(plan.evaluation ? { evaluationDatasetVersion: plan.evaluation.name } : {}),
    datasetIds: [...new Set([plan.input.datasetId, ...(plan.evaluation ? [plan.evaluation.datasetId] : [])])],
    config: plan.config,
    progress: { percent: 0, epoch: 0, totalEpochs: plan.config.epochs, processedTokens: 0 },
    estimatedCostMicros: plan.costMicros,
    execution: {
      trainer: plan.base.training.trainer,
      examplesSkipped: plan.examplesSkipped,
      examplesTrained: 0,
      evalExamples: plan.evalExamples,
    },
    createdBy,
    createTime: new Date(),
    checkpointEpoch: 0,
    checkpointStep: 0,
  };
}

/** The same body in any key order hashes the same. */
function requestHash(body: unknown): string {
  return createHash("sha256").update(canonicalJson(body)).digest("hex");
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

async function requireJob(store: Store, collection: Collection, params: Record<string, string>): Promise<JobRecord> {
  const job = await store.fineTuning.getJob(params.account as string, collection.jobType, params.job as string);
  if (job === undefined)
    throw new ApiError("NOT_FOUND", `No ${collection.listKey} job ${params.job}.`, { param: "job" });
  return job;
}

// ---------------------------------------------------------------------------
// Listing
// ---------------------------------------------------------------------------

async function listJobs(
  req: Request,
  res: Response,
  store: Store,
  collection: Collection,
  accountId: string,
): Promise<void> {
  const pageSize = integerQuery(req.query.pageSize, "pageSize", 50);
  const filter = typeof req.query.filter === "string" ? req.query.filter : "";
  const state = parseStateFilter(filter, "JOB_STATE_", enums.JobState);
  const query = listBinding(collection.listKey, accountId, pageSize, filter);
  const after =
    typeof req.query.pageToken === "string" && req.query.pageToken !== ""
      ? readPageToken(req.query.pageToken, query)
      : undefined;
  const page = await store.fineTuning.listJobs(accountId, collection.jobType, {
    state,
    limit: pageSize + 1,
    afterJob: after === undefined ? undefined : { createSeq: after },
  });
  const jobs = page.jobs.slice(0, pageSize);
  const more = page.jobs.length > pageSize;
  const last = jobs.at(-1);
  const nextPageToken = more && last ? writePageToken(last.createSeq, query) : "";
  res.json({ [collection.listKey]: jobs.map(toTrainingJob), nextPageToken, totalSize: page.total });
}
