/**
 * Everything a job request decides before anything is created: the base model and its
 * training defaults, the filled-in config, the datasets, and the cost with its working.
 * The estimate operation answers with it; create checks it and stores a job from it; the
 * runner trains exactly the rows it names (`splitForEvaluation` is shared for that).
 */
import type { components } from "../../generated/api.d.ts";
import { resolveDatasetVersion, readTrainingRows, type DatasetVersionRef } from "../datasets/training-data.ts";
import { ApiError } from "../http/errors.ts";
import { requireModelAllowed } from "../http/permissions.ts";
import { findPlatformModel, type PlatformModel } from "../inference/catalog.ts";
import { costMicros, formatMoney } from "../store/money.ts";
import type { Account, Store } from "../store/store.ts";
import type { JobType, TrainingConfig } from "../store/fine-tuning.ts";
import { exampleTokens, fitsContext } from "./trainer.ts";

type Schemas = components["schemas"];
export type TrainingJobRequest = Schemas["TrainingJobRequest"];
type TrainableModel = PlatformModel & { training: NonNullable<PlatformModel["training"]> };

export const CURRENCY = "USD";

/** The decisions' fixed defaults; the per-model ones come from the catalogue. */
const FIXED_DEFAULTS = { epochs: 1, earlyStop: false, evalAutoCarveoutBasisPoints: 0, lrSchedule: "constant", warmupSteps: 0 } as const;
const DEFAULT_DPO_BETA = "0.1";

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
  tokensProcessed: number;
  avgTokensPerExample: number;
  costMicros: number;
  egress: Schemas["EgressDecision"];
}

export async function planJob(store: Store, account: Account, jobType: JobType, request: TrainingJobRequest): Promise<JobPlan> {
  const base = trainableBase(account, request.baseModel);
  const config = fillConfig(jobType, base, request.config);
  const format = jobType === "JOB_TYPE_DPO" ? "PREFERENCE" : "SFT";
  const input = await readyVersion(store, account.id, request.inputDatasetVersion, "inputDatasetVersion", format);
  const evaluation = request.evaluationDatasetVersion === undefined ? undefined : await readyVersion(store, account.id, request.evaluationDatasetVersion, "evaluationDatasetVersion", format);
  // Streamed: an estimate of a large dataset holds one row at a time.
  const carveOut = evaluation ? 0 : config.evalAutoCarveoutBasisPoints;
  let index = 0;
  let held = 0;
  let skipped = 0;
  let fitting = 0;
  let tokens = 0;
  for await (const row of readTrainingRows(store, input)) {
    if (isHeldOut(index++, carveOut)) held++;
    else if (!fitsContext(row, config.maxContextLength)) skipped++;
    else {
      fitting++;
      tokens += exampleTokens(row);
    }
  }
  const tokensProcessed = tokens * config.epochs;
  return {
    jobType,
    base,
    config,
    input,
    evaluation,
    examplesTrained: fitting,
    examplesSkipped: skipped,
    evalExamples: evaluation ? evaluation.exampleCount : held,
    tokensProcessed,
    avgTokensPerExample: fitting === 0 ? 0 : Math.round(tokens / fitting),
    costMicros: costMicros(base.training.ratePerMillion, tokensProcessed),
    egress: egressFor(account, base),
  };
}

/** The estimate operation's answer. */
export function costEstimate(plan: JobPlan): Schemas["CostEstimate"] {
  return {
    estimate: {
      exampleCount: String(plan.examplesTrained + plan.examplesSkipped),
      avgTokensPerExample: String(plan.avgTokensPerExample),
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
  if (spec === undefined) {
    // An account's own fine-tuned model is known but not offered; anything else is unknown.
    if (name.startsWith(`accounts/${account.id}/models/`)) {
      throw new ApiError("INVALID_REQUEST", `${name} is a fine-tuned model; training starts from a platform base model.`, { param: "baseModel" });
    }
    throw new ApiError("MODEL_NOT_FOUND", `The model \`${name}\` does not exist or you do not have access to it.`, { param: "baseModel" });
  }
  requireModelAllowed(account, spec.id, "baseModel");
  if (spec.training === undefined) {
    throw new ApiError("INVALID_REQUEST", `The model ${spec.id} is not offered for fine-tuning.`, { param: "baseModel" });
  }
  return spec as TrainableModel;
}

function fillConfig(jobType: JobType, base: TrainableModel, input: Schemas["TrainingConfigInput"]): TrainingConfig {
  if (jobType === "JOB_TYPE_SFT" && input.dpoBeta !== undefined) {
    throw new ApiError("INVALID_REQUEST", "dpoBeta applies to preference (DPO) jobs only.", { param: "config.dpoBeta" });
  }
  const defaults = base.training;
  const config: TrainingConfig = {
    outputModelId: input.outputModelId,
    loraRank: input.loraRank ?? defaults.loraRank,
    learningRate: input.learningRate ?? (jobType === "JOB_TYPE_DPO" ? defaults.dpoLearningRate : defaults.learningRate),
    epochs: input.epochs ?? FIXED_DEFAULTS.epochs,
    batchSize: input.batchSize ?? defaults.batchSize,
    maxContextLength: input.maxContextLength ?? defaults.maxContextLength,
    earlyStop: input.earlyStop ?? FIXED_DEFAULTS.earlyStop,
    evalAutoCarveoutBasisPoints: input.evalAutoCarveoutBasisPoints ?? FIXED_DEFAULTS.evalAutoCarveoutBasisPoints,
    lrSchedule: input.lrSchedule ?? FIXED_DEFAULTS.lrSchedule,
    warmupSteps: input.warmupSteps ?? FIXED_DEFAULTS.warmupSteps,
    ...(jobType === "JOB_TYPE_DPO" ? { dpoBeta: input.dpoBeta ?? DEFAULT_DPO_BETA } : {}),
  };
  requirePositive(config.learningRate, "config.learningRate");
  if (config.dpoBeta !== undefined) requirePositive(config.dpoBeta, "config.dpoBeta");
  return config;
}

function requirePositive(text: string, param: string): void {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new ApiError("INVALID_REQUEST", `${param} must be a number greater than 0.`, { param });
}

async function readyVersion(store: Store, accountId: string, ref: string, param: string, format: "SFT" | "PREFERENCE"): Promise<DatasetVersionRef> {
  const version = await resolveDatasetVersion(store, accountId, ref);
  if (version === undefined) throw new ApiError("NOT_FOUND", `The dataset ${ref} does not exist.`, { param });
  if (version.state !== "DATASET_VERSION_STATE_READY") {
    throw new ApiError("INVALID_REQUEST", `${version.name} is not READY (it is ${version.state}); validate it first.`, { param });
  }
  if (version.format !== format) {
    const wanted = format === "PREFERENCE" ? "preference rows (input, preferred_output, non_preferred_output)" : "SFT rows (messages)";
    throw new ApiError("INVALID_REQUEST", `${version.name} holds ${version.format} rows; this job type trains on ${wanted}.`, { param });
  }
  return version;
}

function egressFor(account: Account, base: TrainableModel): Schemas["EgressDecision"] {
  const required = base.training.requiredAgreementVersion;
  const accepted = account.acceptedAgreementVersion ?? "";
  const agreed = required === "" || accepted === required;
  return {
    allowed: agreed,
    execution: { thirdParty: base.training.thirdParty },
    providerApproved: !base.training.thirdParty || agreed,
    requiredAgreementVersion: required,
    acceptedAgreementVersion: accepted,
  };
}
