/**
 * Everything a job request decides before anything is created: the base model and its
 * training defaults, the filled-in config, the datasets, and the cost with its working.
 * The estimate operation answers with it; create checks it and stores a job from it; the
 * runner trains exactly the rows it names (`splitForEvaluation` is shared for that).
 */
import type { components } from "../../generated/api.d.ts";
import {
  readTrainingRows,
  resolveDatasetVersion,
  versionlessDatasetState,
  type DatasetVersionRef,
} from "../datasets/training-data.ts";
import { ApiError } from "../api-error.ts";
import {
  requireAgreement,
  requireFineTuningEnabled,
  requireModelAllowed,
  requirePaymentMethod,
} from "../http/permissions.ts";
import { meantApiError } from "../http/store-errors.ts";
import { enforceBalance, enforceBudget } from "../http/tenant-limits.ts";
import { findPlatformModel, type PlatformModel } from "../inference/catalog.ts";
import { costMicros, formatMoney } from "../store/money.ts";
import type { Account, Store } from "../store/store.ts";
import { outputModelTakenError, type JobType, type TrainingConfig } from "../store/fine-tuning.ts";
import { exampleTokens, fitsContext } from "./trainer.ts";
import { refuseUnmappable } from "./upstream/config-map.ts";

type Schemas = components["schemas"];
export type TrainingJobRequest = Schemas["TrainingJobRequest"];
export type TrainableModel = PlatformModel & { training: NonNullable<PlatformModel["training"]> };

export const CURRENCY = "USD";

/** The decisions' fixed defaults; the per-model ones (epochs among them) come from the catalogue. */
const FIXED_DEFAULTS = {
  earlyStop: false,
  evalAutoCarveoutBasisPoints: 0,
  lrSchedule: "constant",
  warmupSteps: 0,
} as const;
const DEFAULT_DPO_BETA = "0.1";
/** The contract's ceiling of `epochs`. */
const MAX_EPOCHS = 100;

/**
 * Accepted ranges of the decimal settings (docs/decisions.md). Outside them training
 * cannot work (a learning rate of 1e6 turns the loss into NaN in one step), so they are
 * the caller's error, 400, rather than a job that fails later.
 */
export const LEARNING_RATE_RANGE = { min: 0, max: 1 } as const;
export const DPO_BETA_RANGE = { min: 0, max: 10 } as const;

/**
 * The default epochs: enough passes for `minSteps` optimisation steps over the examples
 * that will be trained on, at least 1 and at most the contract's 100. A small dataset
 * needs many passes to teach anything (40 rows in batches of 8 are 5 steps an epoch);
 * a large one needs one.
 */
export function defaultEpochs(minSteps: number, examples: number, batchSize: number): number {
  const stepsPerEpoch = Math.max(1, Math.ceil(examples / batchSize));
  return Math.min(MAX_EPOCHS, Math.max(1, Math.ceil(minSteps / stepsPerEpoch)));
}

export interface JobPlan {
  jobType: JobType;
  base: TrainableModel;
  config: TrainingConfig;
  input: DatasetVersionRef;
  evaluation?: DatasetVersionRef;
  /** Examples that fit the context and will be trained on, after any evaluation carve-out. */
  examplesTrained: number;
  examplesSkipped: number;
  evalExamples: number;
  /** Tokens of the examples that fit, one pass: tokensPerEpoch × epochs = tokensProcessed. */
  tokensPerEpoch: number;
  tokensProcessed: number;
  costMicros: number;
  /** The error a create with this body would answer for this account, if it would be refused. */
  refusal?: ApiError;
  egress: Schemas["EgressDecision"];
}

export async function planJob(
  store: Store,
  account: Account,
  jobType: JobType,
  request: TrainingJobRequest,
): Promise<JobPlan> {
  const base = trainableBase(account, request.baseModel);
  const settings = fillSettings(jobType, base, request.config);
  const format = jobType === "JOB_TYPE_DPO" ? "PREFERENCE" : "SFT";
  const input = await readyVersion(store, account.id, request.inputDatasetVersion, "inputDatasetVersion", format);
  const evaluation =
    request.evaluationDatasetVersion === undefined
      ? undefined
      : await readyVersion(store, account.id, request.evaluationDatasetVersion, "evaluationDatasetVersion", format);
  // Streamed: an estimate of a large dataset holds one row at a time.
  const carveOut = evaluation ? 0 : settings.evalAutoCarveoutBasisPoints;
  let index = 0;
  let held = 0;
  let skipped = 0;
  let fitting = 0;
  let tokens = 0;
  for await (const row of readTrainingRows(store, input)) {
    if (isHeldOut(index++, carveOut)) held++;
    else if (!fitsContext(row, settings.maxContextLength)) skipped++;
    else {
      fitting++;
      tokens += exampleTokens(row);
    }
  }
  const config = withEpochs(settings, base, request.config, fitting);
  const tokensProcessed = tokens * config.epochs;
  const refusal = await createRefusal(store, account, base, config.outputModelId);
  return {
    jobType,
    base,
    config,
    input,
    evaluation,
    examplesTrained: fitting,
    examplesSkipped: skipped,
    evalExamples: evaluation ? evaluation.exampleCount : held,
    tokensPerEpoch: tokens,
    tokensProcessed,
    costMicros: costMicros(base.training.ratePerMillion, tokensProcessed),
    ...(refusal ? { refusal } : {}),
    egress: egressFor(account, base, refusal),
  };
}

/** The estimate operation's answer. */
export function costEstimate(plan: JobPlan): Schemas["CostEstimate"] {
  return {
    estimate: {
      exampleCount: String(plan.examplesTrained + plan.examplesSkipped),
      avgTokensPerExample: averageText(plan.tokensPerEpoch, plan.examplesTrained),
      tokensPerEpoch: String(plan.tokensPerEpoch),
      epochs: plan.config.epochs,
      tokensProcessed: String(plan.tokensProcessed),
      examplesSkipped: String(plan.examplesSkipped),
      ratePerMillion: { amount: plan.base.training.ratePerMillion, currency: CURRENCY },
      estimatedCost: { amount: formatMoney(plan.costMicros), currency: CURRENCY },
    },
    egress: plan.egress,
  };
}

/**
 * `tokens / examples` with two decimal places, rounded half up, in integer arithmetic so
 * that no binary rounding shows (`"28.95"`; `"0.00"` with no example).
 */
export function averageText(tokens: number, examples: number): string {
  if (examples === 0) return "0.00";
  const hundredths = (BigInt(tokens) * 200n + BigInt(examples)) / (2n * BigInt(examples));
  return `${hundredths / 100n}.${String(hundredths % 100n).padStart(2, "0")}`;
}

/**
 * The held-out share of an evaluation carve-out: `basisPoints`/10000 of the rows, spread
 * evenly through the file (row i is held out when the running share crosses a whole
 * row), so the split is deterministic and the estimate matches what the runner trains.
 */
export function splitForEvaluation<T>(rows: T[], basisPoints: number): { train: T[]; held: T[] } {
  const train: T[] = [];
  const held: T[] = [];
  rows.forEach((row, i) => (isHeldOut(i, basisPoints) ? held : train).push(row));
  return { train, held };
}

export function isHeldOut(index: number, basisPoints: number): boolean {
  return Math.floor(((index + 1) * basisPoints) / 10_000) > Math.floor((index * basisPoints) / 10_000);
}

// ---------------------------------------------------------------------------

function trainableBase(account: Account, name: string): TrainableModel {
  const spec = findPlatformModel(name);
  // The contract's pattern admits platform model names only (accounts/maas/models/…), so an unknown one is unknown.
  if (spec === undefined)
    throw new ApiError("MODEL_NOT_FOUND", `The model \`${name}\` does not exist or you do not have access to it.`, {
      param: "baseModel",
    });
  requireModelAllowed(account, spec.id, "baseModel");
  if (spec.training === undefined) {
    throw new ApiError("INVALID_REQUEST", `The model ${spec.id} is not offered for fine-tuning.`, {
      param: "baseModel",
    });
  }
  return spec as TrainableModel;
}

/** The config a job gets for `input` when `examples` examples will be trained on: every default filled in. */
export function fillConfig(
  jobType: JobType,
  base: TrainableModel,
  input: Schemas["TrainingConfigInput"],
  examples: number,
): TrainingConfig {
  return withEpochs(fillSettings(jobType, base, input), base, input, examples);
}

function withEpochs(
  settings: Omit<TrainingConfig, "epochs">,
  base: TrainableModel,
  input: Schemas["TrainingConfigInput"],
  examples: number,
): TrainingConfig {
  // In the contract's order of fields, which the job's config echoes.
  const { outputModelId, loraRank, learningRate, ...rest } = settings;
  const epochs = input.epochs ?? defaultEpochs(base.training.minSteps, examples, settings.batchSize);
  return { outputModelId, loraRank, learningRate, epochs, ...rest };
}

/** The config with every default filled in but `epochs`, which depends on the dataset's size. */
function fillSettings(
  jobType: JobType,
  base: TrainableModel,
  input: Schemas["TrainingConfigInput"],
): Omit<TrainingConfig, "epochs"> {
  if (jobType === "JOB_TYPE_SFT" && input.dpoBeta !== undefined) {
    throw new ApiError("INVALID_REQUEST", "dpoBeta applies to preference (DPO) jobs only.", {
      param: "config.dpoBeta",
    });
  }
  const defaults = base.training;
  const config: Omit<TrainingConfig, "epochs"> = {
    outputModelId: input.outputModelId,
    loraRank: input.loraRank ?? defaults.loraRank,
    learningRate: input.learningRate ?? (jobType === "JOB_TYPE_DPO" ? defaults.dpoLearningRate : defaults.learningRate),
    batchSize: input.batchSize ?? defaults.batchSize,
    maxContextLength: input.maxContextLength ?? defaults.maxContextLength,
    earlyStop: input.earlyStop ?? FIXED_DEFAULTS.earlyStop,
    evalAutoCarveoutBasisPoints: input.evalAutoCarveoutBasisPoints ?? FIXED_DEFAULTS.evalAutoCarveoutBasisPoints,
    lrSchedule: input.lrSchedule ?? FIXED_DEFAULTS.lrSchedule,
    warmupSteps: input.warmupSteps ?? FIXED_DEFAULTS.warmupSteps,
    ...(jobType === "JOB_TYPE_DPO" ? { dpoBeta: input.dpoBeta ?? DEFAULT_DPO_BETA } : {}),
  };
  requireInRange(config.learningRate, LEARNING_RATE_RANGE, "config.learningRate");
  if (defaults.upstream !== undefined) refuseUnmappable(base, config, FIXED_DEFAULTS);
  if (config.dpoBeta !== undefined) requireInRange(config.dpoBeta, DPO_BETA_RANGE, "config.dpoBeta");
  return config;
}

/** 400 unless min < value ≤ max. */
function requireInRange(text: string, range: { min: number; max: number }, param: string): void {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= range.min || value > range.max) {
    throw new ApiError(
      "INVALID_REQUEST",
      `${param} must be a number greater than ${range.min} and at most ${range.max}; it is ${text}.`,
      { param },
    );
  }
}

async function readyVersion(
  store: Store,
  accountId: string,
  ref: string,
  param: string,
  format: "SFT" | "PREFERENCE",
): Promise<DatasetVersionRef> {
  const version = await resolveDatasetVersion(store, accountId, ref);
  if (version === undefined) {
    const state = await versionlessDatasetState(store, accountId, ref);
    if (state === undefined) throw new ApiError("NOT_FOUND", `The dataset ${ref} does not exist.`, { param });
    throw new ApiError("INVALID_REQUEST", notReady(ref, state), { param });
  }
  if (version.state !== "DATASET_VERSION_STATE_READY")
    throw new ApiError("INVALID_REQUEST", notReady(version.name, version.state), { param });
  if (version.format !== format) {
    const wanted =
      format === "PREFERENCE"
        ? "preference rows (input, preferred_output, non_preferred_output)"
        : "SFT rows (messages)";
    throw new ApiError(
      "INVALID_REQUEST",
      `${version.name} holds ${version.format} rows; this job type trains on ${wanted}.`,
      { param },
    );
  }
  return version;
}

/** Why a dataset (one without a version yet) or a version cannot be trained on yet, and what to do about it. */
function notReady(name: string, state: string): string {
  const is = `${name} is not READY (it is ${state})`;
  switch (state) {
    case "DATASET_STATE_CREATING":
      return `${is}: no file has been uploaded yet; upload one, then call :validateUpload.`;
    case "DATASET_VERSION_STATE_UPLOADING":
      return `${is}: its file is not validated; when the upload has finished, call :validateUpload and wait until it is READY.`;
    case "DATASET_VERSION_STATE_VALIDATING":
      return (
        `${is}: validation is still running; wait until the dataset is READY` +
        " (validation reads about 50 MB a second, so most datasets are READY within seconds) and retry."
      );
    default:
      return `${is}; fix the file and upload it again.`;
  }
}

/**
 * What a create with a valid body would be refused for, checked as the create checks it:
 * fine-tuning enabled, balance and budget (a create is a paid operation), payment method,
 * agreement, output model id free. The estimate reports it as `egress`; the create throws it.
 */
async function createRefusal(
  store: Store,
  account: Account,
  base: TrainableModel,
  outputModelId: string,
): Promise<ApiError | undefined> {
  try {
    requireFineTuningEnabled(account);
    enforceBalance(account);
    await enforceBudget(store, account, new Date());
    requirePaymentMethod(account, { id: base.id, pricePerMillionTokens: base.training.ratePerMillion }, "baseModel");
    requireAgreement(account, base.training.requiredAgreementVersion);
    if (await store.fineTuning.outputModelTaken(account.id, outputModelId)) throw outputModelTakenError(outputModelId);
    return undefined;
  } catch (error) {
    const refusal = meantApiError(error);
    if (refusal) return refusal;
    throw error;
  }
}

function egressFor(account: Account, base: TrainableModel, refusal: ApiError | undefined): Schemas["EgressDecision"] {
  const required = base.training.requiredAgreementVersion;
  const accepted = account.acceptedAgreementVersion ?? "";
  const agreed = required === "" || accepted === required;
  return {
    allowed: refusal === undefined,
    ...(refusal ? { reason: { code: refusal.code, message: refusal.message } } : {}),
    execution: { thirdParty: base.training.thirdParty },
    providerApproved: !base.training.thirdParty || agreed,
    requiredAgreementVersion: required,
    acceptedAgreementVersion: accepted,
  };
}
