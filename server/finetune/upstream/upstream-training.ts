/**
 * One job trained by an `openai-fine-tuning` upstream, from its data to SUCCEEDED:
 *
 *   upload the rows as the upstream's training file (and validation file) → create the
 *   upstream job (its id kept in DATA_DIR: upstream/state.ts) → poll it with backoff,
 *   turning its metrics events into the training curve and `progress` → on success
 *   register the tuned model (served by the upstream under the account's own name) and
 *   bill the tokens the upstream reports trained.
 *
 * The runner (runner.ts) holds the job under its lease as for local training. A restart
 * resumes here: the stored upstream job id is polled again, and a job created just before
 * a crash, before its id was stored, is found by the metadata this server tagged it with,
 * so one job never makes two upstream jobs. A cancel of the job cancels the upstream job,
 * and so does a failure here once the job is FAILED (abandon.ts); a process that is only
 * stopping leaves it running for the next runner.
 */
import { resourceName } from "../../../common/resource-names.ts";
import { readTrainingRows, resolveDatasetVersion, type DatasetVersionRef } from "../../datasets/training-data.ts";
import type { ParsedRow } from "../../datasets/rows.ts";
import { findPlatformModel, type UpstreamTrainerSettings } from "../../inference/catalog.ts";
import { log } from "../../log.ts";
import { ACTIVE_STATES, jobName, type CurvePoint, type JobPatch, type JobRecord } from "../../store/fine-tuning.ts";
import { jobBill } from "../billing.ts";
import { writeFileDurably } from "../files.ts";
import { isHeldOut } from "../plan.ts";
import { exampleTokens, fitsContext } from "../trainer.ts";
import type { RunnerOptions } from "../runner.ts";
import { CancelledError } from "../runner.ts";
import { abandonUpstreamJob } from "./abandon.ts";
import { upstreamHyperparameters } from "./config-map.ts";
import { TrainerFailure } from "./failure.ts";
import { deleteUploadedFiles } from "./uploaded-files.ts";
import {
  OpenAiFineTuningApi,
  UpstreamNotFound,
  UpstreamRefused,
  UpstreamUnreachable,
  type UpstreamEvent,
  type UpstreamJob,
} from "./openai-api.ts";
import {
  readUpstreamState,
  upstreamModelPath,
  upstreamStateFile,
  writeUpstreamState,
  type UpstreamModelFile,
  type UpstreamState,
} from "./state.ts";

/** The metadata key that ties an upstream job to the job that made it. */
export const JOB_METADATA_KEY = "maas_job";

const DEFAULT_POLL_MS = 2_000;
const DEFAULT_MAX_POLL_MS = 60_000;
const DEFAULT_UNREACHABLE_FOR_MS = 600_000;
/** How long a cancel gets to reach the upstream once the job is cancelled here. */
export const CANCEL_TIMEOUT_MS = 10_000;

/** The upstream trainer settings of the job's base model, or undefined when it trains here. */
export function upstreamTrainerOf(job: Pick<JobRecord, "baseModel">): UpstreamTrainerSettings | undefined {
  return findPlatformModel(job.baseModel)?.training?.upstream;
}

export class UpstreamTraining {
  readonly #options: RunnerOptions;
  #job: JobRecord;
  readonly #signal: AbortSignal;
  readonly #owner: string;
  /** True once the process is stopping: nothing is lost by stopping at the next wait. */
  readonly #stopping: () => boolean;
  readonly #settings: UpstreamTrainerSettings;
  readonly #api: OpenAiFineTuningApi;
  readonly #stateFile: string;
  #state: UpstreamState = {};
  /** The last curve step recorded, and the last upstream event read. */
  #lastStep = 0;
  #lastEventId: string | undefined;
  /** The upstream's total steps, from its metrics events. */
  #totalSteps: number | undefined;
  /** The first checkpoint of this run was held (checkpointHoldMs). */
  #checkpointHeld = false;

  constructor(
    options: RunnerOptions,
    job: JobRecord,
    signal: AbortSignal,
    owner: string,
    stopping: () => boolean = () => false,
  ) {
    const settings = upstreamTrainerOf(job);
    if (settings === undefined) throw new Error(`${job.baseModel} has no upstream trainer`);
    this.#options = options;
    this.#job = job;
    this.#signal = signal;
    this.#owner = owner;
    this.#stopping = stopping;
    this.#settings = settings;
    this.#api = new OpenAiFineTuningApi(settings);
    this.#stateFile = upstreamStateFile(options.dataDir, job.accountId, job.jobId);
  }

  get #store() {
    return this.#options.store.fineTuning;
  }

  get #name(): string {
    return jobName(this.#job.accountId, this.#job.jobId);
  }

  async run(): Promise<void> {
    this.#state = await readUpstreamState(this.#stateFile);
    const curve = await this.#store.readCurve(this.#job.accountId, this.#job.jobId, "training");
    this.#lastStep = curve.at(-1)?.step ?? 0;
    try {
      const upstreamJobId = await this.#upstreamJob();
      await this.#poll(upstreamJobId);
    } catch (error) {
      if (this.#signal.aborted || error instanceof CancelledError) await this.#cancelUpstreamIfCancelled();
      else this.#abandonUpstream();
      throw error;
    }
  }

  /** The job fails here (the runner writes FAILED): its upstream job, if one was made, is cancelled in the background. */
  #abandonUpstream(): void {
    if (this.#state.upstreamJobId === undefined && this.#state.trainingFileId === undefined) return;
    const first = this.#settings.pollMs ?? DEFAULT_POLL_MS;
    const { accountId, jobType, jobId } = this.#job;
    void abandonUpstreamJob({
      api: this.#api,
      name: this.#name,
      upstreamJobId: async (signal) =>
        this.#state.upstreamJobId ?? (await this.#api.findJob(JOB_METADATA_KEY, this.#name, signal))?.id,
      jobState: async () => (await this.#store.getJob(accountId, jobType, jobId))?.state,
      deleteFiles: () => deleteUploadedFiles(this.#api, this.#state, this.#name, CANCEL_TIMEOUT_MS),
      firstWaitMs: first,
      longestWaitMs: Math.max(first, this.#settings.maxPollMs ?? DEFAULT_MAX_POLL_MS),
      boundMs: this.#settings.unreachableForMs ?? DEFAULT_UNREACHABLE_FOR_MS,
      callTimeoutMs: CANCEL_TIMEOUT_MS,
    });
  }

  /** The upstream job's id: the stored one, one this job made before a crash, or a new one. */
  async #upstreamJob(): Promise<string> {
    if (this.#state.upstreamJobId !== undefined) return this.#state.upstreamJobId;
    const earlier = await this.#reach((signal) => this.#api.findJob(JOB_METADATA_KEY, this.#name, signal));
    if (earlier !== undefined) {
      await this.#saveState({ upstreamJobId: earlier.id });
      return earlier.id;
    }
    await this.#uploadFiles();
    const job = this.#job;
    const training = findPlatformModel(job.baseModel)?.training;
    if (training === undefined)
      throw new TrainerFailure("INTERNAL", "The base model is no longer offered for training; it is not billed.");
    const hyperparameters = upstreamHyperparameters(job.jobType, training, job.config);
    let attempts = 0;
    // A create whose answer was lost may have made the job: a retry asks for it by its tag first.
    const created = await this.#reach(
      async (signal) =>
        (attempts++ > 0 ? await this.#api.findJob(JOB_METADATA_KEY, this.#name, signal) : undefined) ??
        this.#api.createJob(
          {
            model: this.#settings.model,
            training_file: this.#state.trainingFileId as string,
            ...(this.#state.validationFileId ? { validation_file: this.#state.validationFileId } : {}),
            suffix: job.config.outputModelId.slice(0, 64),
            metadata: { [JOB_METADATA_KEY]: this.#name },
            method:
              job.jobType === "JOB_TYPE_DPO"
                ? { type: "dpo", dpo: { hyperparameters } }
                : { type: "supervised", supervised: { hyperparameters } },
          },
          signal,
        ),
    ).catch((error: unknown) => {
      throw error instanceof UpstreamRefused ? this.#refused(error) : error;
    });
    await this.#saveState({ upstreamJobId: created.id });
    log("info", "job.upstream_created", { job: this.#name, upstreamJob: created.id });
    return created.id;
  }

  /** The training rows (and the evaluation rows, when there are any) as the upstream's files. */
  async #uploadFiles(): Promise<void> {
    if (this.#state.trainingFileId !== undefined) return;
    const { train, evaluation, skipped } = await this.#rows();
    if (train.length === 0)
      throw new TrainerFailure(
        "INVALID_DATA",
        `No example fits maxContextLength ${this.#job.config.maxContextLength}; ${skipped} were skipped. It is not billed.`,
      );
    const jsonl = (rows: ParsedRow[]) => rows.map((r) => JSON.stringify(r.row)).join("\n") + "\n";
    const trainingFileId = await this.#reach((signal) =>
      this.#api.uploadFile(`${this.#job.jobId}-train.jsonl`, jsonl(train), signal),
    ).catch((error: unknown) => {
      throw error instanceof UpstreamRefused ? this.#refused(error) : error;
    });
    const validationFileId =
      evaluation.length === 0
        ? undefined
        : await this.#reach((signal) =>
            this.#api.uploadFile(`${this.#job.jobId}-eval.jsonl`, jsonl(evaluation), signal),
          ).catch((error: unknown) => {
            throw error instanceof UpstreamRefused ? this.#refused(error) : error;
          });
    await this.#saveState({
      trainingFileId,
      ...(validationFileId ? { validationFileId } : {}),
      examplesTrained: train.length,
      examplesSkipped: skipped,
      tokensPerEpoch: train.reduce((sum, row) => sum + exampleTokens(row), 0),
      evalExamples: evaluation.length,
    });
  }

  /**
   * The rows to send: those that fit maxContextLength (the rest are skipped, never
   * truncated, as the estimate counted), and the evaluation dataset the job names or the
   * carve-out the estimate counted.
   */
  async #rows(): Promise<{ train: ParsedRow[]; evaluation: ParsedRow[]; skipped: number }> {
    const job = this.#job;
    const rows = await collect(readTrainingRows(this.#options.store, await this.#version(job.inputDatasetVersion)));
    const fits = (row: ParsedRow) => fitsContext(row, job.config.maxContextLength);
    const split = (train: ParsedRow[], evaluation: ParsedRow[]) => ({
      train: train.filter(fits),
      evaluation,
      skipped: train.filter((row) => !fits(row)).length,
    });
    if (job.evaluationDatasetVersion !== undefined) {
      const evaluation = await this.#version(job.evaluationDatasetVersion);
      return split(rows, await collect(readTrainingRows(this.#options.store, evaluation)));
    }
    const carveOut = job.config.evalAutoCarveoutBasisPoints;
    return split(
      rows.filter((_, i) => !isHeldOut(i, carveOut)),
      rows.filter((_, i) => isHeldOut(i, carveOut)),
    );
  }

  async #version(ref: string): Promise<DatasetVersionRef> {
    const version = await resolveDatasetVersion(this.#options.store, this.#job.accountId, ref);
    if (version === undefined)
      throw new TrainerFailure("INVALID_DATA", `The dataset version ${ref} no longer exists. It is not billed.`);
    return version;
  }

  /** Polls until the upstream job ends: every `pollMs` while it changes, backing off to `maxPollMs` while it does not. */
  async #poll(id: string): Promise<void> {
    const first = this.#settings.pollMs ?? DEFAULT_POLL_MS;
    const longest = Math.max(first, this.#settings.maxPollMs ?? DEFAULT_MAX_POLL_MS);
    let interval = first;
    let lastStatus: UpstreamJob["status"] | undefined;
    for (;;) {
      const upstream = await this.#reach((signal) => this.#api.getJob(id, signal));
      const events = await this.#reach((signal) => this.#api.eventsSince(id, this.#lastEventId, signal));
      const recorded = await this.#record(upstream, events);
      if (recorded && upstream.status === "running") await this.#checkpoint(id);
      if (upstream.status === "succeeded") return this.#finish(upstream);
      if (upstream.status === "failed") throw this.#failed(upstream);
      if (upstream.status === "cancelled") {
        throw new TrainerFailure(
          "INTERNAL",
          "The trainer stopped the job before it finished; it is not billed. Create the job again.",
        );
      }
      const changed = recorded || upstream.status !== lastStatus;
      lastStatus = upstream.status;
      interval = changed ? first : Math.min(longest, interval * 2);
      await this.#sleep(interval);
    }
  }

  /** The events' metrics as curve points and progress; true when anything new arrived. */
  async #record(upstream: UpstreamJob, events: UpstreamEvent[]): Promise<boolean> {
    if (events.length > 0) this.#lastEventId = events.at(-1)?.id;
    const epochs = this.#job.config.epochs;
    const points: CurvePoint[] = [];
    const evaluation: CurvePoint[] = [];
    let totalSteps = 0;
    for (const event of events) {
      const metrics = stepMetrics(event);
      if (metrics === undefined || metrics.step <= this.#lastStep) continue;
      totalSteps = metrics.totalSteps;
      this.#totalSteps = metrics.totalSteps;
      const epoch = Math.min(epochs, Math.max(1, Math.ceil((metrics.step * epochs) / metrics.totalSteps)));
      const time = new Date(event.created_at * 1000);
      const learningRate = Number(this.#job.config.learningRate);
      points.push({ step: metrics.step, epoch, loss: metrics.trainLoss, learningRate, time });
      if (metrics.validLoss !== undefined)
        evaluation.push({ step: metrics.step, epoch, loss: metrics.validLoss, learningRate: 0, time });
      this.#lastStep = metrics.step;
    }
    const { accountId, jobId } = this.#job;
    if (points.length > 0) await this.#store.appendCurve(accountId, jobId, "training", points);
    if (evaluation.length > 0) await this.#store.appendCurve(accountId, jobId, "evaluation", evaluation);
    const last = points.at(-1);
    if (last !== undefined && upstream.status === "running") {
      const done = last.step / totalSteps;
      // Counted as the estimate counts, until the upstream reports what it trained.
      const planned = (this.#state.tokensPerEpoch ?? 0) * this.#job.config.epochs;
      const processedTokens = Math.floor(planned * done);
      // The percent of that same count, so the two never disagree by a rounding (at step 6 of
      // 12 with an odd total, 50 % stood beside tokens just under half); 99 at most until the
      // upstream says it succeeded: its last step is not its end.
      const percent = Math.min(
        99,
        planned > 0 ? Math.floor((processedTokens * 100) / planned) : Math.floor(done * 100),
      );
      await this.#update({ progress: { ...this.#job.progress, percent, epoch: last.epoch, processedTokens } });
    }
    return events.length > 0;
  }

  /**
   * A checkpoint the upstream saved since the last one: the document's RUNNING →
   * CHECKPOINTING → RUNNING, with the checkpoint's epoch and step recorded on the job.
   */
  async #checkpoint(id: string): Promise<void> {
    const totalSteps = this.#totalSteps;
    if (totalSteps === undefined) return;
    const step = await this.#reach((signal) => this.#api.latestCheckpointStep(id, signal));
    if (step === undefined || step <= this.#job.checkpointStep) return;
    const epochs = this.#job.config.epochs;
    const epoch = Math.min(epochs, Math.max(1, Math.round((step * epochs) / totalSteps)));
    await this.#update({ state: "JOB_STATE_CHECKPOINTING" }, ["JOB_STATE_RUNNING"]);
    // The run's first checkpoint lasts checkpointHoldMs (the development server's, as for the
    // embedded trainer), so a client sees the state and the kit can prove a cancel there is 409.
    if (!this.#checkpointHeld) await this.#sleep(this.#options.checkpointHoldMs ?? 0);
    this.#checkpointHeld = true;
    await this.#update({ state: "JOB_STATE_RUNNING", checkpointEpoch: epoch, checkpointStep: step }, [
      "JOB_STATE_CHECKPOINTING",
    ]);
  }

  async #finish(upstream: UpstreamJob): Promise<void> {
    const job = this.#job;
    if (upstream.fine_tuned_model === null)
      throw new TrainerFailure("INTERNAL", "The trainer reported success without a model; it is not billed.");
    await this.#update({ state: "JOB_STATE_FINALIZING" }, ["JOB_STATE_RUNNING"]);
    const modelId = job.config.outputModelId;
    const adapterPath = upstreamModelPath(job.accountId, modelId);
    const file: UpstreamModelFile = { trainer: "openai-fine-tuning", model: upstream.fine_tuned_model };
    await writeFileDurably(`${this.#options.dataDir}/${adapterPath}`, new TextEncoder().encode(JSON.stringify(file)));
    const trainedTokens = upstream.trained_tokens ?? 0;
    const execution = {
      ...job.execution,
      examplesTrained: this.#state.examplesTrained ?? job.execution.examplesTrained,
      examplesSkipped: this.#state.examplesSkipped ?? job.execution.examplesSkipped,
      evalExamples: this.#state.evalExamples ?? job.execution.evalExamples,
    };
    // Billed for the tokens the upstream reports trained (its progress below), in the same
    // transaction (finetune/billing.ts).
    this.#job = await this.#store.completeJob(
      job.accountId,
      job.jobId,
      {
        accountId: job.accountId,
        modelId,
        baseModel: job.baseModel,
        jobName: this.#name,
        adapterPath,
        createTime: new Date(),
      },
      {
        outputModel: resourceName(job.accountId, "models", modelId),
        completeTime: new Date(),
        execution,
        progress: { ...job.progress, percent: 100, epoch: job.config.epochs, processedTokens: trainedTokens },
      },
      this.#owner,
      jobBill(job),
    );
    await deleteUploadedFiles(this.#api, this.#state, this.#name, CANCEL_TIMEOUT_MS);
  }

  /** The upstream's failure in the document's classes; its own words go to the log only (they may name it). */
  #failed(upstream: UpstreamJob): TrainerFailure {
    log("warn", "job.upstream_failed", {
      job: this.#name,
      upstreamJob: upstream.id,
      error: JSON.stringify(upstream.error),
    });
    const code = upstream.error?.code ?? "";
    const refusedData = dataRefusal(code, upstream.error?.param);
    if (refusedData) return refusedData;
    if (/diverg|nan/i.test(code))
      return new TrainerFailure(
        "TRAINING_DIVERGED",
        "The loss diverged; lower the learning rate and create the job again. It is not billed.",
      );
    return new TrainerFailure("INTERNAL", "The trainer failed the job; it is not billed. Create the job again.");
  }

  /** A 4xx from the upstream on upload or create: the job cannot run there as it is. */
  #refused(error: UpstreamRefused): TrainerFailure {
    log("warn", "job.upstream_refused", {
      job: this.#name,
      status: error.status,
      code: error.code,
      detail: error.message,
    });
    const refusedData = dataRefusal(error.code, error.param);
    if (refusedData) return refusedData;
    const which = [error.code, error.param].filter(Boolean).join(", ");
    return new TrainerFailure(
      "INTERNAL",
      `The trainer refused the job${which ? ` (${which})` : ""}; it is not billed. The operator's trainer settings need a look.`,
    );
  }

  /**
   * Calls the upstream, retrying while it is unreachable, with the poll's backoff, for at
   * most `unreachableForMs` counted from the first failure in a row (kept across restarts);
   * then the job FAILS. A job the upstream no longer knows FAILS at once: it is lost.
   */
  async #reach<T>(call: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const first = this.#settings.pollMs ?? DEFAULT_POLL_MS;
    const longest = Math.max(first, this.#settings.maxPollMs ?? DEFAULT_MAX_POLL_MS);
    const bound = this.#settings.unreachableForMs ?? DEFAULT_UNREACHABLE_FOR_MS;
    let wait = first;
    for (;;) {
      try {
        const result = await call(this.#signal);
        if (this.#state.unreachableSince !== undefined) await this.#saveState({ unreachableSince: undefined });
        return result;
      } catch (error) {
        if (this.#signal.aborted) throw this.#signal.reason;
        if (error instanceof UpstreamNotFound) {
          log("warn", "job.upstream_lost", { job: this.#name, detail: error.message });
          throw new TrainerFailure("INTERNAL", "The trainer lost the job; it is not billed. Create the job again.");
        }
        if (!(error instanceof UpstreamUnreachable)) throw error;
        const since = this.#state.unreachableSince ?? Date.now();
        if (this.#state.unreachableSince === undefined) await this.#saveState({ unreachableSince: since });
        log("warn", "job.upstream_unreachable", {
          job: this.#name,
          detail: error.message,
          sinceMs: Date.now() - since,
        });
        if (Date.now() - since >= bound) {
          throw new TrainerFailure(
            "INTERNAL",
            `The trainer could not be reached for ${Math.round(bound / 1000)} s; the job is not billed. Create it again later.`,
          );
        }
        await this.#sleep(Math.min(wait, Math.max(1, since + bound - Date.now())));
        wait = Math.min(longest, wait * 2);
      }
    }
  }

  /** After an abort: when the job was cancelled (here or by another process), the upstream job is cancelled too. */
  async #cancelUpstreamIfCancelled(): Promise<void> {
    // Files uploaded but no create sent yet: nothing runs upstream.
    if (this.#state.upstreamJobId === undefined && this.#state.trainingFileId === undefined) return;
    const now = await this.#store
      .getJob(this.#job.accountId, this.#job.jobType, this.#job.jobId)
      .catch(() => undefined);
    if (now?.state !== "JOB_STATE_CANCELLED") return;
    const signal = AbortSignal.timeout(CANCEL_TIMEOUT_MS);
    try {
      // A cancel that came while the create was on its way: the upstream job is found by its tag.
      const id = this.#state.upstreamJobId ?? (await this.#api.findJob(JOB_METADATA_KEY, this.#name, signal))?.id;
      if (id !== undefined) {
        await this.#api.cancelJob(id, signal);
        log("info", "job.upstream_cancelled", { job: this.#name, upstreamJob: id });
      }
    } catch (error) {
      log("warn", "job.upstream_cancel_failed", { job: this.#name, detail: String(error) });
      return;
    }
    await deleteUploadedFiles(this.#api, this.#state, this.#name, CANCEL_TIMEOUT_MS);
  }

  async #saveState(patch: Partial<UpstreamState>): Promise<void> {
    this.#state = { ...this.#state, baseModel: this.#job.baseModel, ...patch };
    await writeUpstreamState(this.#stateFile, this.#state);
  }

  /** Updates the job while it is still this runner's; a cancel or a takeover stops the work. */
  async #update(patch: JobPatch, fromStates: readonly JobRecord["state"][] = ACTIVE_STATES): Promise<void> {
    const updated = await this.#store.updateJob(this.#job.accountId, this.#job.jobId, patch, fromStates, this.#owner);
    if (updated === undefined) throw new CancelledError("the job was cancelled or taken over");
    this.#job = updated;
  }

  /**
   * Waits, or stops at once when the job is cancelled (the signal) or the process is
   * stopping (looked at every quarter second: a drain need not wait out a long poll).
   */
  async #sleep(ms: number): Promise<void> {
    const until = Date.now() + ms;
    for (;;) {
      if (this.#stopping()) throw new CancelledError("the process is stopping; the next runner resumes polling");
      const left = until - Date.now();
      if (left <= 0) return;
      await sleepOrAbort(Math.min(left, STOP_CHECK_MS), this.#signal);
    }
  }
}

const STOP_CHECK_MS = 250;

/** INVALID_DATA when the upstream's code or parameter names the data (a file, an example, a format). */
function dataRefusal(code: string | null | undefined, param: string | null | undefined): TrainerFailure | undefined {
  const which = [code, param].filter(Boolean).join(", ");
  if (!/file|data|example|format/i.test(which)) return undefined;
  return new TrainerFailure(
    "INVALID_DATA",
    `The trainer refused the training data (${which}); fix the dataset and create the job again. It is not billed.`,
  );
}

function sleepOrAbort(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

interface StepMetrics {
  step: number;
  totalSteps: number;
  trainLoss: number;
  validLoss?: number;
}

/** A `metrics` event's step metrics (`data: {step, total_steps, train_loss, full_valid_loss?}`), or undefined. */
function stepMetrics(event: UpstreamEvent): StepMetrics | undefined {
  if (event.type !== "metrics" || typeof event.data !== "object" || event.data === null) return undefined;
  const data = event.data as Record<string, unknown>;
  const { step, total_steps: totalSteps, train_loss: trainLoss } = data;
  if (typeof step !== "number" || typeof totalSteps !== "number" || typeof trainLoss !== "number") return undefined;
  if (!(step > 0 && totalSteps >= step && Number.isFinite(trainLoss))) return undefined;
  const valid = data.full_valid_loss;
  return {
    step,
    totalSteps,
    trainLoss,
    ...(typeof valid === "number" && Number.isFinite(valid) ? { validLoss: valid } : {}),
  };
}

async function collect<T>(rows: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const row of rows) all.push(row);
  return all;
}
