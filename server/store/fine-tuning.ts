/**
 * Fine-tuning jobs, idempotency records, training curves and fine-tuned models in the
 * store. Records hold numbers and Dates; server/finetune/wire.ts turns them into the
 * contract's shapes (64-bit integers as strings, times as RFC 3339).
 */
import { resourceName } from "../../common/resource-names.ts";
import type { components } from "../../generated/api.d.ts";
import { StoreError } from "./errors.ts";

export type JobType = components["schemas"]["JobType"];
export type JobState = components["schemas"]["JobState"];
export type TrainingConfig = components["schemas"]["TrainingConfig"];

export const TERMINAL_STATES: ReadonlySet<JobState> = new Set([
  "JOB_STATE_SUCCEEDED",
  "JOB_STATE_FAILED",
  "JOB_STATE_CANCELLED",
  "JOB_STATE_EXPIRED",
]);
/**
 * The states a job may be cancelled from: the interface document says, three times, that
 * only queued or running jobs can be cancelled; CHECKPOINTING is not one of them.
 */
export const CANCELLABLE_STATES: readonly JobState[] = ["JOB_STATE_QUEUED", "JOB_STATE_RUNNING"];
/** The states in which a runner holds the job under a lease. */
export const ACTIVE_STATES: readonly JobState[] = [
  "JOB_STATE_RUNNING",
  "JOB_STATE_CHECKPOINTING",
  "JOB_STATE_FINALIZING",
];

export interface JobProgress {
  percent: number;
  epoch: number;
  totalEpochs: number;
  processedTokens: number;
}

export interface JobExecution {
  trainer: string;
  examplesSkipped: number;
  examplesTrained: number;
  evalExamples: number;
  /** The tokens the job was billed for (finetune/billing.ts); absent until it is billed. */
  billedTokens?: number;
  /** What the account was charged for them, in micro-units; absent until billed. */
  billedMicros?: number;
}

/**
 * What a job is billed as it ends (store/shared/job-bill.ts): the tokens its progress shows
 * then, at this rate, charged in the same transaction.
 */
export interface JobBill {
  /** The base model's training price per million tokens (a decimal string, as the catalogue has it). */
  ratePerMillion: string;
  /** When the charge is recorded. */
  at: Date;
}

export interface JobRecord {
  accountId: string;
  jobId: string;
  jobType: JobType;
  state: JobState;
  stateDetail?: string;
  errorClass?: string;
  baseModel: string;
  /** The pinned version name the job trains on (`…/versions/{n}`). */
  inputDatasetVersion: string;
  evaluationDatasetVersion?: string;
  /** The datasets the job uses, for a dataset's full view. */
  datasetIds: string[];
  outputModel?: string;
  config: TrainingConfig;
  progress: JobProgress;
  estimatedCostMicros: number;
  execution: JobExecution;
  /** `keys/{keyId}`. */
  createdBy: string;
  createTime: Date;
  startTime?: Date;
  completeTime?: Date;
  /** The last epoch whose checkpoint is saved; 0 when none. */
  checkpointEpoch: number;
  /** The optimisation step at that checkpoint; 0 when none. */
  checkpointStep: number;
}

/** The changeable fields of a job. */
export type JobPatch = Partial<
  Pick<
    JobRecord,
    | "state"
    | "stateDetail"
    | "errorClass"
    | "evaluationDatasetVersion"
    | "outputModel"
    | "progress"
    | "execution"
    | "startTime"
    | "completeTime"
    | "checkpointEpoch"
    | "checkpointStep"
    | "datasetIds"
  >
>;

export interface IdempotencyClaim {
  key: string;
  /** A hash of the request body; the same key with another body is `idempotency-conflict`. */
  requestHash: string;
}

export interface JobQuery {
  state?: JobState;
  /** Only jobs created before this job (the previous page's last), newest first. */
  afterJob?: { createSeq: number };
  limit: number;
}

export type CurveSeries = "training" | "evaluation";

export interface CurvePoint {
  step: number;
  epoch: number;
  loss: number;
  learningRate: number;
  time: Date;
}

export interface AccountModel {
  accountId: string;
  modelId: string;
  baseModel: string;
  /** The job that produced it. */
  jobName: string;
  /** Where the adapter is stored, relative to the data directory. */
  adapterPath: string;
  createTime: Date;
}

/** A job held by a runner, with its place in the creation order for paging. */
export interface ClaimedJob {
  job: JobRecord;
  /** Whether a previous runner had started it (resume from `checkpointEpoch`). */
  resumed: boolean;
}

/** A job with its creation sequence number, for page tokens. */
export interface ListedJob extends JobRecord {
  createSeq: number;
}

export interface FineTuningStore {
  /**
   * Creates the job, in one transaction with its idempotency record: the same key and
   * body return the first job (`created: false`); the same key with another body is
   * `idempotency-conflict`. An output model id already used by the account (by a model or
   * by a job that has not failed) is `already-exists`.
   */
  createJob(job: JobRecord, idempotency?: IdempotencyClaim): Promise<{ job: JobRecord; created: boolean }>;
  /**
   * The job an earlier create with this Idempotency-Key made, or undefined; the same key with
   * another body is `idempotency-conflict`. Read before a create is planned, so that a retry
   * gets the first job even when planning it again would now be refused (its dataset deleted,
   * the balance spent); createJob checks the key again in its transaction for concurrent creates.
   */
  findIdempotentJob(accountId: string, jobType: JobType, claim: IdempotencyClaim): Promise<JobRecord | undefined>;
  /** Whether createJob would refuse `modelId` as taken (a model, or a job making one, has it). */
  outputModelTaken(accountId: string, modelId: string): Promise<boolean>;
  getJob(accountId: string, jobType: JobType, jobId: string): Promise<JobRecord | undefined>;
  listJobs(accountId: string, jobType: JobType, query: JobQuery): Promise<{ jobs: ListedJob[]; total: number }>;
  /**
   * Applies the patch when the job is in one of `fromStates` (any state when omitted) and,
   * with `leaseOwner`, while that runner still holds the job's lease (a runner that lost its
   * job to another, say after a long pause, cannot write over the new holder's work);
   * returns the job after, or undefined when it was not so. With `bill` (a cancel), the job
   * after the patch is billed and the account charged in the same transaction.
   */
  updateJob(
    accountId: string,
    jobId: string,
    patch: JobPatch,
    fromStates?: readonly JobState[],
    leaseOwner?: string,
    bill?: JobBill,
  ): Promise<JobRecord | undefined>;
  /**
   * Takes the oldest job that needs a runner: QUEUED, or active with an expired lease (its
   * runner died). Sets it RUNNING under `owner`'s lease. Undefined when there is none.
   */
  claimJob(owner: string, now: Date, leaseMs: number): Promise<ClaimedJob | undefined>;
  /** Extends the lease; false when the owner lost the job (cancelled, or another took it). */
  renewLease(accountId: string, jobId: string, owner: string, until: Date): Promise<boolean>;
  /** QUEUED jobs created before `before` become EXPIRED; returns how many. */
  expireQueued(before: Date, now: Date): Promise<number>;
  appendCurve(accountId: string, jobId: string, series: CurveSeries, points: CurvePoint[]): Promise<void>;
  /** Points of a series, oldest first. */
  readCurve(accountId: string, jobId: string, series: CurveSeries): Promise<CurvePoint[]>;
  /** Drops points after `step` (a resumed job recomputes them). */
  truncateCurve(accountId: string, jobId: string, series: CurveSeries, afterStep: number): Promise<void>;
  /**
   * Records the model and marks the job SUCCEEDED, in one transaction (with `bill`, the job
   * billed and the account charged in it too); `job-state` when the job is no longer active
   * (or no longer `leaseOwner`'s).
   */
  completeJob(
    accountId: string,
    jobId: string,
    model: AccountModel,
    patch: JobPatch,
    leaseOwner?: string,
    bill?: JobBill,
  ): Promise<JobRecord>;
  findModel(accountId: string, modelId: string): Promise<AccountModel | undefined>;
  listModels(accountId: string): Promise<AccountModel[]>;
  /** The jobs whose input or evaluation data is the dataset (any version), newest first. */
  jobsUsingDataset(
    accountId: string,
    datasetId: string,
  ): Promise<{ name: string; jobType: JobType; state: JobState }[]>;
}

export function jobName(accountId: string, jobId: string): string {
  return resourceName(accountId, "trainingJobs", jobId);
}

/** An output model id the account already uses (`already-exists`): the stores' refusal, and the estimate's. */
export function outputModelTakenError(modelId: string): StoreError {
  return new StoreError(
    "already-exists",
    `The account already has a model (or a job making one) with the id ${modelId}.`,
    { field: "config.outputModelId" },
  );
}
