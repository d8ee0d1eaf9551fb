/**
 * A job as both stores keep it: one row per job, the columns their queries need, and the
 * whole record as JSON text beside them (the same text in SQLite and PostgreSQL); and an
 * account's model and a training curve's point from their rows (the schemas name the
 * columns alike).
 */
import { ACTIVE_STATES, type AccountModel, type CurvePoint, type JobRecord, type JobState } from "../fine-tuning.ts";
import type { Row } from "./columns.ts";

/** States whose output model id stays taken (a failed, cancelled or expired job frees it). */
export const HOLDS_OUTPUT_MODEL: readonly JobState[] = ["JOB_STATE_QUEUED", ...ACTIVE_STATES, "JOB_STATE_SUCCEEDED"];

const DATE_FIELDS = ["createTime", "startTime", "completeTime"] as const;

/** The record as stored: JSON with times as milliseconds. */
export function serializeRecord(job: JobRecord): string {
  return JSON.stringify(job, (key, value) =>
    DATE_FIELDS.includes(key as (typeof DATE_FIELDS)[number]) && typeof value === "string" ? Date.parse(value) : value,
  );
}

/** The record from its stored text (a column value as the driver returns it). */
export function parseRecord(text: unknown): JobRecord {
  const raw = JSON.parse(String(text)) as Record<string, unknown>;
  for (const field of DATE_FIELDS) if (typeof raw[field] === "number") raw[field] = new Date(raw[field]);
  return raw as unknown as JobRecord;
}

/** An account's model (a fine-tuned output) from its row. */
export function modelFromRow(row: Row): AccountModel {
  return {
    accountId: String(row.account_id),
    modelId: String(row.model_id),
    baseModel: String(row.base_model),
    jobName: String(row.job_name),
    adapterPath: String(row.adapter_path),
    createTime: new Date(Number(row.create_time_ms)),
  };
}

/** A point of a training curve from its row. */
export function curvePointFromRow(row: Row): CurvePoint {
  return {
    step: Number(row.step),
    epoch: Number(row.epoch),
    loss: Number(row.loss),
    learningRate: Number(row.learning_rate),
    time: new Date(Number(row.time_ms)),
  };
}
