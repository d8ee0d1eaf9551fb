/**
 * The schema of a job record as both stores keep it (JSON, times as milliseconds), typed
 * against JobRecord so that tsc refuses a field added to one and not the other (its type,
 * and with requiredKeys whether it is required). The enums come from the contract
 * (generated/contract-values.ts).
 *
 * Fields the schema does not name are let through: a record written by a newer version
 * during a rolling deploy stays readable by an older one. Optional fields carry
 * `nullable: true` because ajv's JSONSchemaType asks for it on every optional property.
 */
import type { JSONSchemaType } from "ajv";
import { enums } from "../../../generated/contract-values.ts";
import { requiredKeys } from "../../checked-json.ts";
import type { JobExecution, JobProgress, JobRecord, TrainingConfig } from "../fine-tuning.ts";

export const DATE_FIELDS = ["createTime", "startTime", "completeTime"] as const;

/** A JobRecord as its stored JSON holds it: the Dates as milliseconds since the epoch. */
export type StoredJobRecord = Omit<JobRecord, (typeof DATE_FIELDS)[number]> & {
  createTime: number;
  startTime?: number;
  completeTime?: number;
};

const count = { type: "integer", minimum: 0 } as const;
const optionalCount = { ...count, nullable: true } as const;
const text = { type: "string" } as const;
const optionalText = { type: "string", nullable: true } as const;
const decimalText = { type: "string", pattern: "^[+]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)([eE][+-]?[0-9]+)?$" } as const;

const trainingConfig: JSONSchemaType<TrainingConfig> = {
  type: "object",
  required: requiredKeys<TrainingConfig>()([
    "outputModelId",
    "loraRank",
    "learningRate",
    "epochs",
    "batchSize",
    "maxContextLength",
    "earlyStop",
    "evalAutoCarveoutBasisPoints",
    "lrSchedule",
    "warmupSteps",
  ]),
  properties: {
    outputModelId: text,
    loraRank: count,
    learningRate: decimalText,
    epochs: count,
    batchSize: count,
    maxContextLength: count,
    earlyStop: { type: "boolean" },
    evalAutoCarveoutBasisPoints: count,
    lrSchedule: { type: "string", enum: enums.LrSchedule },
    warmupSteps: count,
    dpoBeta: { ...decimalText, nullable: true },
  },
};

const progress: JSONSchemaType<JobProgress> = {
  type: "object",
  required: requiredKeys<JobProgress>()(["percent", "epoch", "totalEpochs", "processedTokens"]),
  properties: { percent: { type: "number" }, epoch: count, totalEpochs: count, processedTokens: count },
};

const execution: JSONSchemaType<JobExecution> = {
  type: "object",
  required: requiredKeys<JobExecution>()(["trainer", "examplesSkipped", "examplesTrained", "evalExamples"]),
  properties: {
    trainer: text,
    examplesSkipped: count,
    examplesTrained: count,
    evalExamples: count,
    billedTokens: optionalCount,
    billedMicros: optionalCount,
  },
};

export const storedJobRecordSchema: JSONSchemaType<StoredJobRecord> = {
  type: "object",
  required: requiredKeys<StoredJobRecord>()([
    "accountId",
    "jobId",
    "jobType",
    "state",
    "baseModel",
    "inputDatasetVersion",
    "datasetIds",
    "config",
    "progress",
    "estimatedCostMicros",
    "execution",
    "createdBy",
    "createTime",
    "checkpointEpoch",
    "checkpointStep",
  ]),
  properties: {
    accountId: text,
    jobId: text,
    jobType: { type: "string", enum: enums.JobType },
    state: { type: "string", enum: enums.JobState },
    stateDetail: optionalText,
    errorClass: optionalText,
    baseModel: text,
    inputDatasetVersion: text,
    evaluationDatasetVersion: optionalText,
    datasetIds: { type: "array", items: text },
    outputModel: optionalText,
    config: trainingConfig,
    progress,
    estimatedCostMicros: count,
    execution,
    createdBy: text,
    createTime: count,
    startTime: optionalCount,
    completeTime: optionalCount,
    checkpointEpoch: count,
    checkpointStep: count,
  },
};
