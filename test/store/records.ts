/** Records to hand a store directly, for the store's own tests: a new dataset, a job. */
import type { NewDataset } from "../../server/store/datasets.ts";
import type { JobRecord } from "../../server/store/fine-tuning.ts";

/** An uploaded dataset of `accountId`, created now, with no display name. */
export function newDataset(accountId: string, datasetId: string): NewDataset {
  return { accountId, datasetId, displayName: "", source: "DATASET_SOURCE_UPLOAD", now: new Date() };
}

let n = 0;

/** A queued SFT job of `accountId` with a job id and output model id no other call returns (`sft-<n>`, `model-<n>`). */
export function queuedJob(accountId: string, overrides: Partial<JobRecord> = {}): JobRecord {
  n++;
  return {
    accountId,
    jobId: `sft-${n}`,
    jobType: "JOB_TYPE_SFT",
    state: "JOB_STATE_QUEUED",
    baseModel: "tiny-chat",
    inputDatasetVersion: `accounts/${accountId}/datasets/d/versions/1`,
    datasetIds: ["d"],
    config: {
      outputModelId: `model-${n}`,
      loraRank: 8,
      learningRate: "0.01",
      epochs: 1,
      batchSize: 8,
      maxContextLength: 256,
      earlyStop: false,
      evalAutoCarveoutBasisPoints: 0,
      lrSchedule: "constant",
      warmupSteps: 0,
    },
    progress: { percent: 0, epoch: 0, totalEpochs: 1, processedTokens: 0 },
    estimatedCostMicros: 10,
    execution: { trainer: "local-lora", examplesSkipped: 0, examplesTrained: 0, evalExamples: 0 },
    createdBy: "keys/key_1",
    createTime: new Date(),
    checkpointEpoch: 0,
    checkpointStep: 0,
    ...overrides,
  };
}
