/**
 * Trainer checkpoints: everything needed to continue a job at the next epoch exactly as
 * if it had never stopped (adapter factors, Adam moments, counters, early-stop state).
 * Stored in the local model's tensor-file container: a JSON header and Float32 tensors.
 */
import { readTensorFile, writeTensorFile } from "../inference/local/tensor-file.ts";
import {
  adapterMatricesSchema,
  adapterMetaSchema,
  cloneAdapter,
  putAdapterTensors,
  takeAdapterTensors,
  type Adapter,
  type AdapterMeta,
} from "../inference/local/index.ts";
import type { AdamState } from "./local/index.ts";
import type { JSONSchemaType } from "ajv";
import { compileCheck, CorruptDataError, requiredKeys } from "../checked-json.ts";

export { cloneAdapter };

/** Early stopping's memory across epochs (see train() for the rule). */
export interface EarlyStopState {
  /** Lowest evaluation loss so far, null before the first evaluation. */
  bestLoss: number | null;
  bestEpoch: number;
  /** The adapter of bestEpoch; the result when early stopping is in effect. */
  bestAdapter: Adapter | null;
  /** Set once an epoch failed to improve: training ends. */
  stopped: boolean;
}

/** Opaque to the job runner: store it with serializeCheckpoint, hand it back as `resume`. */
export interface TrainerCheckpoint {
  readonly kind: "SFT" | "DPO";
  /** Epochs completed. */
  readonly epoch: number;
  /** Optimisation steps completed. */
  readonly step: number;
  readonly processedTokens: number;
  /** Loss of the first step (the divergence check's yardstick); null before it. */
  readonly firstLoss: number | null;
  readonly adapter: Adapter;
  readonly optimizer: AdamState;
  readonly earlyStop: EarlyStopState;
}

const FORMAT = "trainer-checkpoint";
const VERSION = 1;

function cloneRecord(record: Record<string, Float32Array>): Record<string, Float32Array> {
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, v.slice()]));
}

/** A copy that training can no longer change (the live state keeps moving after onEpochEnd). */
export function snapshot(c: TrainerCheckpoint): TrainerCheckpoint {
  const { optimizer: o, earlyStop: e } = c;
  return {
    ...c,
    adapter: cloneAdapter(c.adapter),
    optimizer: { step: o.step, m: cloneRecord(o.m), v: cloneRecord(o.v), options: { ...o.options } },
    earlyStop: { ...e, bestAdapter: e.bestAdapter === null ? null : cloneAdapter(e.bestAdapter) },
  };
}

export function serializeCheckpoint(c: TrainerCheckpoint): Uint8Array {
  const tensors = new Map<string, Float32Array>();
  const adapter = putAdapterTensors(tensors, "adapter/", c.adapter);
  const moments = Object.keys(c.optimizer.m);
  for (const name of moments) {
    tensors.set(`m/${name}`, c.optimizer.m[name]!);
    tensors.set(`v/${name}`, c.optimizer.v[name]!);
  }
  const best = c.earlyStop.bestAdapter === null ? null : putAdapterTensors(tensors, "best/", c.earlyStop.bestAdapter);
  const { clipNorm, ...adam } = c.optimizer.options;
  const meta = {
    kind: FORMAT,
    version: VERSION,
    training: c.kind,
    epoch: c.epoch,
    step: c.step,
    processedTokens: c.processedTokens,
    firstLoss: c.firstLoss,
    // JSON has no Infinity: a disabled clip is stored as null.
    optimizer: {
      step: c.optimizer.step,
      moments,
      options: { ...adam, clipNorm: Number.isFinite(clipNorm) ? clipNorm : null },
    },
    ...adapter,
    earlyStop: { bestLoss: c.earlyStop.bestLoss, bestEpoch: c.earlyStop.bestEpoch, stopped: c.earlyStop.stopped, best },
  };
  return writeTensorFile(meta, tensors);
}

interface CheckpointMeta {
  kind: string;
  version: number;
  training: "SFT" | "DPO";
  epoch: number;
  step: number;
  processedTokens: number;
  /** Absent in checkpoints written before the divergence check. */
  firstLoss?: number | null;
  optimizer: {
    step: number;
    moments: string[];
    options: Omit<AdamState["options"], "clipNorm"> & { clipNorm: number | null };
  };
  /** The adapter's header entry (AdapterMeta) is spread here. */
  matrices: AdapterMeta["matrices"];
  addedTokens?: number[];
  earlyStop: {
    bestLoss: number | null;
    bestEpoch: number;
    stopped: boolean;
    best: AdapterMeta | AdapterMeta["matrices"] | null;
  };
}

const count = { type: "integer", minimum: 0 } as const;
// JSONSchemaType spells `number | null` as anyOf (its `nullable` stands for an optional property).
const NULL = { type: "null", nullable: true } as const;
const numberOrNull = { anyOf: [{ type: "number" }, NULL] } as const;

const checkpointMetaSchema: JSONSchemaType<CheckpointMeta> = {
  type: "object",
  required: requiredKeys<CheckpointMeta>()([
    "kind",
    "version",
    "training",
    "epoch",
    "step",
    "processedTokens",
    "optimizer",
    "matrices",
    "earlyStop",
  ]),
  properties: {
    kind: { type: "string" },
    version: { type: "integer" },
    training: { type: "string", enum: ["SFT", "DPO"] },
    epoch: count,
    step: count,
    processedTokens: count,
    firstLoss: { type: "number", nullable: true },
    optimizer: {
      type: "object",
      required: requiredKeys<CheckpointMeta["optimizer"]>()(["step", "moments", "options"]),
      properties: {
        step: count,
        moments: { type: "array", items: { type: "string" } },
        options: {
          type: "object",
          required: requiredKeys<CheckpointMeta["optimizer"]["options"]>()([
            "beta1",
            "beta2",
            "eps",
            "weightDecay",
            "clipNorm",
          ]),
          properties: {
            beta1: { type: "number" },
            beta2: { type: "number" },
            eps: { type: "number" },
            weightDecay: { type: "number" },
            clipNorm: numberOrNull,
          },
        },
      },
    },
    matrices: adapterMatricesSchema,
    addedTokens: { type: "array", items: { type: "integer", minimum: 0 }, nullable: true },
    earlyStop: {
      type: "object",
      required: requiredKeys<CheckpointMeta["earlyStop"]>()(["bestLoss", "bestEpoch", "stopped", "best"]),
      properties: {
        bestLoss: numberOrNull,
        bestEpoch: count,
        stopped: { type: "boolean" },
        best: { anyOf: [adapterMetaSchema, adapterMatricesSchema, NULL] },
      },
    },
  },
};

const checkCheckpointMeta = compileCheck(checkpointMetaSchema);

/** The checkpoint serializeCheckpoint wrote; `source` (its file) is named by any error, with the field at fault. */
export function loadCheckpoint(bytes: Uint8Array, source = "checkpoint"): TrainerCheckpoint {
  const { meta: raw, tensors } = readTensorFile(bytes, source);
  if (raw.kind !== FORMAT || raw.version !== VERSION)
    throw new CorruptDataError(source, "", `is not a trainer checkpoint of version ${VERSION}`);
  const meta = checkCheckpointMeta(raw, source);
  const m: Record<string, Float32Array> = {};
  const v: Record<string, Float32Array> = {};
  for (const name of meta.optimizer.moments) {
    m[name] = tensor(tensors, `m/${name}`, source);
    v[name] = tensor(tensors, `v/${name}`, source);
  }
  const { clipNorm, ...adam } = meta.optimizer.options;
  const { best, ...earlyStop } = meta.earlyStop;
  return {
    kind: meta.training,
    epoch: meta.epoch,
    step: meta.step,
    processedTokens: meta.processedTokens,
    firstLoss: meta.firstLoss ?? null,
    adapter: takeAdapterTensors(tensors, "adapter/", meta, source),
    optimizer: { step: meta.optimizer.step, m, v, options: { ...adam, clipNorm: clipNorm ?? Infinity } },
    earlyStop: {
      ...earlyStop,
      bestAdapter: best === null ? null : takeAdapterTensors(tensors, "best/", bestMeta(best), source),
    },
  };
}

/** Checkpoints written before adapters could add tokens stored the best adapter's matrices alone (no matrix is named "matrices"). */
function bestMeta(best: AdapterMeta | AdapterMeta["matrices"]): AdapterMeta {
  return "matrices" in best ? (best as AdapterMeta) : { matrices: best as AdapterMeta["matrices"] };
}

function tensor(tensors: Map<string, Float32Array>, name: string, source: string): Float32Array {
  const t = tensors.get(name);
  if (t === undefined) throw new CorruptDataError(source, "", `lacks the tensor ${name}`);
  return t;
}
