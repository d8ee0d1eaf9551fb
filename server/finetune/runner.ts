/**
 * The job runner: takes QUEUED jobs from the store one at a time, trains them, and moves
 * them through the states of the decisions:
 *
 *   QUEUED → RUNNING → (CHECKPOINTING → RUNNING at each epoch end) → FINALIZING → SUCCEEDED
 *   any active state → FAILED; cancel (routes.ts) → CANCELLED; too long in the queue → EXPIRED.
 *
 * A runner holds its job under a lease it renews while training. When a process dies its
 * lease runs out and a runner (in this process after a restart, or another one sharing
 * the store) takes the job again and resumes it from its last checkpoint, so a job is
 * never stuck RUNNING and never trained by two runners at once.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { resourceName } from "../../common/resource-names.ts";
import {
  createDerivedDataset,
  readTrainingRows,
  resolveDatasetVersion,
  type DatasetVersionRef,
} from "../datasets/training-data.ts";
import { log } from "../log.ts";
import { loadAdapter } from "../inference/local/index.ts";
import { isStoreError } from "../store/errors.ts";
import {
  ACTIVE_STATES,
  jobName,
  type ClaimedJob,
  type CurvePoint,
  type JobPatch,
  type JobRecord,
} from "../store/fine-tuning.ts";
import type { Store } from "../store/store.ts";
import { jobBill } from "./billing.ts";
import type { Deployments } from "./deployments.ts";
import { writeFileDurably } from "./files.ts";
import { TrainerFailure } from "./upstream/failure.ts";
import { UpstreamTraining, upstreamTrainerOf } from "./upstream/upstream-training.ts";
import { tunedAnswers } from "./job-output.ts";
import { LeaseHeartbeat } from "./lease-heartbeat.ts";
import { isHeldOut } from "./plan.ts";
import type { ParsedRow } from "../datasets/rows.ts";
import {
  loadCheckpoint,
  serializeCheckpoint,
  train,
  TrainingDataError,
  TrainingDivergedError,
  type EpochEnd,
  type StepPoint,
  type TrainerConfig,
  type TrainerResult,
} from "./trainer.ts";

export interface RunnerOptions {
  store: Store;
  dataDir: string;
  deployments: Deployments;
  /** How long a runner's hold on a job lasts without renewal. */
  leaseMs: number;
  /** How often an idle runner looks for work (a create wakes it at once). */
  pollMs: number;
  /** A job QUEUED longer than this EXPIRES. */
  queueTtlMs: number;
  /** The least time a job stays in CHECKPOINTING at its run's first epoch end (index.ts, FineTuningOptions). */
  checkpointHoldMs?: number;
  /** Told when this runner takes a job and when it lets it go (the worker logs these). */
  onEvent?: (event: RunnerEvent) => void;
}

/**
 * `claimed`: this runner holds the job now (`resumed`: from a checkpoint another left).
 * `released`: it stopped working on it: `done` (succeeded or failed), `stopped` (cancelled,
 * taken over, or this process is stopping).
 */
export type RunnerEvent =
  { type: "claimed"; job: string; resumed: boolean } | { type: "released"; job: string; outcome: "done" | "stopped" };

/** The job this runner is training. */
interface CurrentJob {
  accountId: string;
  jobId: string;
  abort: AbortController;
  /** Set when the process is stopping with time to spare: stop at the next checkpoint. */
  stopAtCheckpoint: boolean;
  /** Resolves once the runner has let the job go (lease released when stopping). */
  released: Promise<void>;
}

/** A failure caused by the job's data rather than by the service; reported as errorClass INVALID_DATA. */
class DataError extends Error {}

/**
 * The errorClass of a failed job: INVALID_DATA (the job's data), TRAINING_DIVERGED (its
 * settings made the loss diverge), or INTERNAL (ours). The first two are the caller's to fix.
 */
function failureClass(error: unknown): "INVALID_DATA" | "TRAINING_DIVERGED" | "INTERNAL" {
  if (error instanceof DataError || error instanceof TrainingDataError) return "INVALID_DATA";
  if (error instanceof TrainingDivergedError) return "TRAINING_DIVERGED";
  return "INTERNAL";
}

/** Times one job may stop for a store that cannot be reached before it fails INTERNAL. */
const MAX_STORE_PAUSES = 10;

/** How often progress and curve points are written while training. */
const FLUSH_MS = 250;

export class JobRunner {
  readonly #options: RunnerOptions;
  readonly #owner = `runner-${randomUUID()}`;
  #stopped = false;
  #loop: Promise<void> | undefined;
  #wake: (() => void) | undefined;
  #current: CurrentJob | undefined;
  /** Jobs this runner stopped because the store could not be reached, and how often. */
  readonly #storePauses = new Map<string, number>();

  constructor(options: RunnerOptions) {
    this.#options = options;
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  /** A job was created: look for work now rather than at the next poll. */
  wake(): void {
    this.#wake?.();
  }

  /** The job was cancelled: if this runner is training it, stop within a step. */
  cancelled(accountId: string, jobId: string): void {
    const current = this.#current;
    if (current?.accountId === accountId && current.jobId === jobId) current.abort.abort(new Error("cancelled"));
  }

  /**
   * Stops taking jobs. A job in training gets up to `graceMs` to reach its next checkpoint
   * (the end of its epoch) and stops there; past that it stops at once. Either way its
   * lease is released, so that another runner resumes it from its last checkpoint at once
   * rather than after the lease runs out.
   */
  async close(graceMs = 0): Promise<void> {
    this.#stopped = true;
    this.#wake?.();
    const current = this.#current;
    if (current !== undefined && graceMs > 0) {
      current.stopAtCheckpoint = true;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([current.released, new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
      clearTimeout(timer);
    }
    this.#current?.abort.abort(new Error("the server is stopping"));
    await this.#loop;
  }

  async #run(): Promise<void> {
    while (!this.#stopped) {
      try {
        await this.#options.store.fineTuning.expireQueued(new Date(Date.now() - this.#options.queueTtlMs), new Date());
        const claimedAt = Date.now();
        const claimed = await this.#options.store.fineTuning.claimJob(
          this.#owner,
          new Date(claimedAt),
          this.#options.leaseMs,
        );
        if (claimed) await this.#train(claimed, claimedAt + this.#options.leaseMs);
        else await this.#idle();
      } catch (error) {
        // The store was unavailable or closed: wait and look again, unless stopping.
        if (!this.#stopped) log("error", "job.runner_failed", { detail: describe(error) });
        await this.#idle();
      }
    }
  }

  #idle(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, this.#options.pollMs);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** `heldUntil`: when the lease taken with the claim ends. */
  async #train(claimed: ClaimedJob, heldUntil: number): Promise<void> {
    const { job } = claimed;
    const abort = new AbortController();
    let released!: () => void;
    const current: CurrentJob = {
      accountId: job.accountId,
      jobId: job.jobId,
      abort,
      stopAtCheckpoint: false,
      released: new Promise((resolve) => (released = resolve)),
    };
    this.#current = current;
    const name = jobName(job.accountId, job.jobId);
    const heartbeat = new LeaseHeartbeat({
      job: name,
      leaseMs: this.#options.leaseMs,
      heldUntil,
      renew: (until) => this.#options.store.fineTuning.renewLease(job.accountId, job.jobId, this.#owner, until),
      onLost: (reason) => abort.abort(reason),
    });
    this.#options.onEvent?.({ type: "claimed", job: name, resumed: claimed.resumed });
    let outcome: "done" | "stopped" = "done";
    try {
      // A base whose catalogue entry names an upstream trainer is trained there (finetune/upstream/).
      await (
        upstreamTrainerOf(job)
          ? new UpstreamTraining(this.#options, job, abort.signal, this.#owner, () => current.stopAtCheckpoint)
          : new Training(this.#options, job, abort.signal, this.#owner, () => current.stopAtCheckpoint)
      ).run();
    } catch (error) {
      // Cancelled, taken over or stopping: the job is no longer this runner's to fail.
      if (abort.signal.aborted || error instanceof CancelledError) outcome = "stopped";
      else if (this.#pausedByStore(name, error)) {
        outcome = "stopped";
        await this.#releaseLease(job);
      } else await this.#fail(job, error);
    } finally {
      heartbeat.stop();
      if (outcome === "done") this.#storePauses.delete(name); // ended here: its count is done with
      if (this.#stopped && outcome === "stopped") await this.#releaseLease(job);
      this.#current = undefined;
      released();
      this.#options.onEvent?.({ type: "released", job: name, outcome });
    }
  }

  /**
   * A store that could not be reached mid-job (a progress or curve write in an outage) is
   * not the job's failure: the run stops, and the job is claimed again from its last
   * checkpoint once the store answers (at once if the lease could be released, else when it
   * runs out). Bounded, so that a write that can never succeed still ends the job.
   */
  #pausedByStore(name: string, error: unknown): boolean {
    if (!isStoreError(error, "unavailable")) return false;
    const pauses = (this.#storePauses.get(name) ?? 0) + 1;
    if (pauses > MAX_STORE_PAUSES) return false;
    this.#storePauses.set(name, pauses);
    log("warn", "job.paused", { job: name, pauses, detail: describe(error) });
    return true;
  }

  /** Lets another runner claim the job now: a lease that ran out long ago (no change when the job is no longer this runner's). */
  async #releaseLease(job: JobRecord): Promise<void> {
    await this.#options.store.fineTuning
      .renewLease(job.accountId, job.jobId, this.#owner, new Date(0))
      // A store that cannot be reached now: the lease then runs out by itself, later.
      .catch(() => false);
  }

  async #fail(job: JobRecord, error: unknown): Promise<void> {
    const errorClass = error instanceof TrainerFailure ? error.errorClass : failureClass(error);
    if (errorClass === "INTERNAL")
      log("error", "job.failed", { job: jobName(job.accountId, job.jobId), errorClass, detail: describe(error) });
    const patch: JobPatch = {
      state: "JOB_STATE_FAILED",
      errorClass,
      stateDetail:
        error instanceof TrainerFailure
          ? error.message
          : errorClass === "INTERNAL"
            ? "Training failed because of an internal error; it is not billed."
            : `${(error as Error).message} It is not billed.`,
      completeTime: new Date(),
    };
    await this.#options.store.fineTuning
      .updateJob(job.accountId, job.jobId, patch, ACTIVE_STATES, this.#owner)
      .catch(() => undefined);
  }
}

/** One job's training, from its data to SUCCEEDED. */
class Training {
  readonly #options: RunnerOptions;
  #job: JobRecord;
  readonly #signal: AbortSignal;
  /** This runner's lease owner id: every write about the job is fenced by it. */
  readonly #owner: string;
  /** True once the process is stopping: the job stops after its next checkpoint. */
  readonly #stopAtCheckpoint: () => boolean;
  #pending: CurvePoint[] = [];
  #lastFlush = 0;
  /** The last optimisation step reported. */
  #step = 0;

  constructor(
    options: RunnerOptions,
    job: JobRecord,
    signal: AbortSignal,
    owner: string,
    stopAtCheckpoint: () => boolean = () => false,
  ) {
    this.#options = options;
    this.#job = job;
    this.#signal = signal;
    this.#owner = owner;
    this.#stopAtCheckpoint = stopAtCheckpoint;
  }

  get #store() {
    return this.#options.store.fineTuning;
  }

  async run(): Promise<void> {
    const job = this.#job;
    const { train: trainRows, evaluation } = await this.#data();
    const resume = await this.#resumePoint();
    const result = await train({
      kind: job.jobType === "JOB_TYPE_DPO" ? "DPO" : "SFT",
      baseModel: job.baseModel,
      config: trainerConfig(job),
      train: trainRows,
      evaluation,
      signal: this.#signal,
      resume,
      onStep: (point) => this.#onStep(point),
      onEpochEnd: (end) => this.#onEpochEnd(end),
    });
    if (result.examplesTrained === 0)
      throw new DataError(
        `No example fits maxContextLength ${job.config.maxContextLength}; ${result.examplesSkipped} were skipped.`,
      );
    await this.#finish(result, evaluation);
  }

  /** The training rows and the evaluation rows, writing the carve-out dataset the first time. */
  async #data(): Promise<{ train: ParsedRow[]; evaluation: ParsedRow[] }> {
    const job = this.#job;
    const input = await this.#version(job.inputDatasetVersion);
    const rows = await collect(readTrainingRows(this.#options.store, input));
    const carveOut = job.config.evalAutoCarveoutBasisPoints;
    const splitName = resourceName(job.accountId, "datasets", `${job.jobId}-eval`);
    const userEvaluation =
      job.evaluationDatasetVersion !== undefined && !job.evaluationDatasetVersion.startsWith(`${splitName}/`);
    if (userEvaluation) {
      return {
        train: rows,
        evaluation: await collect(
          readTrainingRows(this.#options.store, await this.#version(job.evaluationDatasetVersion as string)),
        ),
      };
    }
    if (carveOut === 0) return { train: rows, evaluation: [] };
    const train = rows.filter((_, i) => !isHeldOut(i, carveOut));
    const held = rows.filter((_, i) => isHeldOut(i, carveOut));
    if (job.evaluationDatasetVersion === undefined && held.length > 0) await this.#writeSplit(held);
    return { train, evaluation: held };
  }

  async #writeSplit(held: ParsedRow[]): Promise<void> {
    const job = this.#job;
    const datasetId = `${job.jobId}-eval`;
    const version = await createDerivedDataset(this.#options.store, {
      accountId: job.accountId,
      datasetId,
      displayName: `Evaluation rows held out by ${job.jobId}`,
      source: "DATASET_SOURCE_SPLIT",
      rows: held.map((r) => r.row),
    }).catch(async (error: unknown) => {
      // A previous run of this job wrote it before the process died.
      if (isStoreError(error, "already-exists"))
        return this.#version(resourceName(job.accountId, "datasets", datasetId));
      throw error;
    });
    await this.#update({ evaluationDatasetVersion: version.name, datasetIds: [...job.datasetIds, datasetId] });
  }

  async #version(ref: string): Promise<DatasetVersionRef> {
    const version = await resolveDatasetVersion(this.#options.store, this.#job.accountId, ref);
    if (version === undefined) throw new DataError(`The dataset version ${ref} no longer exists.`);
    return version;
  }

  async #resumePoint() {
    const job = this.#job;
    if (job.checkpointEpoch === 0) {
      await this.#store.truncateCurve(job.accountId, job.jobId, "training", 0);
      await this.#store.truncateCurve(job.accountId, job.jobId, "evaluation", 0);
      return undefined;
    }
    // Steps after the checkpoint are trained again; their points are recorded again.
    await this.#store.truncateCurve(job.accountId, job.jobId, "training", job.checkpointStep);
    await this.#store.truncateCurve(job.accountId, job.jobId, "evaluation", job.checkpointStep);
    const file = this.#checkpointFile();
    return loadCheckpoint(await readFile(file), `checkpoint ${file}`);
  }

  async #onStep(point: StepPoint): Promise<void> {
    this.#step = point.step;
    this.#pending.push({
      step: point.step,
      epoch: point.epoch,
      loss: point.loss,
      learningRate: point.learningRate,
      time: new Date(),
    });
    this.#job = {
      ...this.#job,
      progress: {
        ...this.#job.progress,
        percent: Math.floor(point.percent),
        epoch: point.epoch,
        processedTokens: point.processedTokens,
      },
    };
    if (Date.now() - this.#lastFlush >= FLUSH_MS) await this.#flush();
  }

  async #flush(): Promise<void> {
    this.#lastFlush = Date.now();
    const points = this.#pending;
    this.#pending = [];
    if (points.length > 0) await this.#store.appendCurve(this.#job.accountId, this.#job.jobId, "training", points);
    await this.#update({ progress: this.#job.progress });
  }

  /** The first checkpoint of this run was held (checkpointHoldMs). */
  #checkpointHeld = false;

  async #onEpochEnd(end: EpochEnd): Promise<void> {
    await this.#flush();
    await this.#update({ state: "JOB_STATE_CHECKPOINTING" }, ["JOB_STATE_RUNNING"]);
    const checkpointing = Date.now();
    await writeFileDurably(this.#checkpointFile(), serializeCheckpoint(end.checkpoint));
    const step = this.#step;
    if (end.evaluationLoss !== undefined) {
      const point = { step, epoch: end.epoch, loss: end.evaluationLoss, learningRate: 0, time: new Date() };
      await this.#store.appendCurve(this.#job.accountId, this.#job.jobId, "evaluation", [point]);
    }
    // Only the run's first checkpoint is held: enough for a client to see the state, at a
    // cost of one hold a job, not one an epoch.
    const hold = this.#checkpointHeld ? 0 : (this.#options.checkpointHoldMs ?? 0) - (Date.now() - checkpointing);
    this.#checkpointHeld = true;
    if (hold > 0) await delay(hold, undefined, { signal: this.#signal });
    await this.#update({ state: "JOB_STATE_RUNNING", checkpointEpoch: end.epoch, checkpointStep: step }, [
      "JOB_STATE_CHECKPOINTING",
    ]);
    if (this.#stopAtCheckpoint())
      throw new CancelledError("the process is stopping; the job resumes from this checkpoint");
  }

  async #finish(result: TrainerResult, evaluation: ParsedRow[]): Promise<void> {
    const job = this.#job;
    await this.#update({ state: "JOB_STATE_FINALIZING" }, ["JOB_STATE_RUNNING"]);
    const modelId = job.config.outputModelId;
    const adapterPath = path.join("models", job.accountId, `${modelId}.lora`);
    await writeFileDurably(path.join(this.#options.dataDir, adapterPath), result.adapter);
    const adapter = loadAdapter(result.adapter);
    if (evaluation.length > 0) await this.#writeOutput(adapter, evaluation);
    this.#options.deployments.warm({ accountId: job.accountId, modelId }, adapter);
    const model = {
      accountId: job.accountId,
      modelId,
      baseModel: job.baseModel,
      jobName: jobName(job.accountId, job.jobId),
      adapterPath,
      createTime: new Date(),
    };
    const execution = {
      ...job.execution,
      examplesTrained: result.examplesTrained,
      examplesSkipped: result.examplesSkipped,
      evalExamples: result.evalExamples,
    };
    const progress = { ...job.progress, percent: 100 };
    const stateDetail = result.stoppedEarly ? "Stopped early: the evaluation loss stopped improving." : undefined;
    // Billed for the tokens it trained, in the same transaction (finetune/billing.ts).
    this.#job = await this.#store.completeJob(
      job.accountId,
      job.jobId,
      model,
      {
        outputModel: resourceName(job.accountId, "models", modelId),
        completeTime: new Date(),
        execution,
        progress,
        ...(stateDetail ? { stateDetail } : {}),
      },
      this.#owner,
      jobBill(job),
    );
  }

  async #writeOutput(adapter: ReturnType<typeof loadAdapter>, evaluation: ParsedRow[]): Promise<void> {
    const job = this.#job;
    await createDerivedDataset(this.#options.store, {
      accountId: job.accountId,
      datasetId: `${job.jobId}-output`,
      displayName: `Answers of ${job.config.outputModelId} to the evaluation prompts of ${job.jobId}`,
      source: "DATASET_SOURCE_JOB_OUTPUT",
      rows: tunedAnswers(job.baseModel, adapter, evaluation, this.#signal),
    }).catch((error: unknown) => {
      if (!isStoreError(error, "already-exists")) throw error;
    });
  }

  /**
   * Updates the job while it is still this runner's to update: a cancel in between, or
   * another runner having taken the job over (this one paused past its lease), stops training.
   */
  async #update(patch: JobPatch, fromStates: readonly JobRecord["state"][] = ACTIVE_STATES): Promise<void> {
    const updated = await this.#store.updateJob(this.#job.accountId, this.#job.jobId, patch, fromStates, this.#owner);
    if (updated === undefined) throw abortError(this.#signal, "the job was cancelled");
    this.#job = updated;
  }

  #checkpointFile(): string {
    return path.join(this.#options.dataDir, "checkpoints", this.#job.accountId, `${this.#job.jobId}.ckpt`);
  }
}

function trainerConfig(job: JobRecord): TrainerConfig {
  return toTrainerConfig(job.config);
}

/** A job's config (decimal texts) as the trainer takes it (numbers). */
export function toTrainerConfig(c: JobRecord["config"]): TrainerConfig {
  return {
    loraRank: c.loraRank,
    learningRate: Number(c.learningRate),
    epochs: c.epochs,
    batchSize: c.batchSize,
    maxContextLength: c.maxContextLength,
    earlyStop: c.earlyStop,
    lrSchedule: c.lrSchedule,
    warmupSteps: c.warmupSteps,
    dpoBeta: Number(c.dpoBeta ?? "0.1"),
  };
}

function abortError(signal: AbortSignal, reason: string): Error {
  return signal.aborted ? (signal.reason as Error) : new CancelledError(reason);
}

/** An error for the log: its stack when it has one. */
function describe(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

/** The job left this runner's hands (cancelled); not a failure. */
export class CancelledError extends Error {}

async function collect<T>(rows: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const row of rows) all.push(row);
  return all;
}
