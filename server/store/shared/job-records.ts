/**
 * A job as both stores keep it: one row per job, the columns their queries need, and the
 * whole record as JSON text beside them (the same text in SQLite and PostgreSQL); and an
 * account's model and a training curve's point from their rows (the schemas name the
 * columns alike).
 */
import { ACTIVE_STATES, type AccountModel, type CurvePoint, type JobRecord, type JobState } from "../fine-tuning.ts";
import { compileCheck, CorruptDataError } from "../../checked-json.ts";
import type { Row } from "./columns.ts";
import { DATE_FIELDS, storedJobRecordSchema } from "./job-record-schema.ts";

/** States whose output model id stays taken (a failed, cancelled or expired job frees it). */
export const HOLDS_OUTPUT_MODEL: readonly JobState[] = ["JOB_STATE_QUEUED", ...ACTIVE_STATES, "JOB_STATE_SUCCEEDED"];

const checkStoredRecord = compileCheck(storedJobRecordSchema);

/** The record as stored: JSON with times as milliseconds. */
export function serializeRecord(job: JobRecord): string {
  return JSON.stringify(job, (key, value) =>
    DATE_FIELDS.includes(key as (typeof DATE_FIELDS)[number]) && typeof value === "string" ? Date.parse(value) : value,
  );
}

/**
 * The record from its stored text (a column value as the driver returns it), checked: a
 * corrupt row fails with a CorruptDataError naming the row and the field (the HTTP edge
 * answers 500 INTERNAL with the envelope and logs the message).
 */
export function parseRecord(text: unknown): JobRecord {
  let raw: unknown;
  try {
    raw = JSON.parse(String(text));
  } catch (error) {
    throw new CorruptDataError("training_jobs row", "", `is not JSON (${(error as Error).message})`);
  }
  const stored = checkStoredRecord(raw, rowName(raw));
  const { createTime, startTime, completeTime, ...rest } = stored;
  return {
    ...rest,
    createTime: new Date(createTime),
    ...(startTime !== undefined && startTime !== null ? { startTime: new Date(startTime) } : {}),
    ...(completeTime !== undefined && completeTime !== null ? { completeTime: new Date(completeTime) } : {}),
  };
}

/** `training_jobs row acme/ft-123`: the job the row says it holds, as far as it can be read. */
function rowName(raw: unknown): string {
  const { accountId, jobId } = (typeof raw === "object" && raw !== null ? raw : {}) as Record<string, unknown>;
  const known = (v: unknown) => (typeof v === "string" ? v : "?");
  return `training_jobs row ${known(accountId)}/${known(jobId)}`;
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
