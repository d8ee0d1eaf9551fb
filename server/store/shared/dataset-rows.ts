/**
 * Dataset and version records from database rows. The SQLite and PostgreSQL schemas name
 * the columns alike, so both stores map their rows here; only how a boolean arrives
 * differs (SQLite: 0/1, PostgreSQL: true/false).
 */
import {
  EMPTY_VALIDATION,
  type DatasetFormat,
  type DatasetRecord,
  type DatasetSource,
  type DatasetState,
  type DatasetVersionState,
  type ValidationRecord,
  type VersionRecord,
} from "../datasets.ts";
import { flag, type Row } from "./columns.ts";

export function datasetFromRow(row: Row): DatasetRecord {
  return {
    accountId: String(row.account_id),
    datasetId: String(row.dataset_id),
    seq: Number(row.seq),
    displayName: String(row.display_name),
    source: String(row.source) as DatasetSource,
    state: String(row.state) as DatasetState,
    latestVersionNo: Number(row.latest_version_no),
    totalBytes: Number(row.total_bytes),
    createTime: new Date(Number(row.create_time_ms)),
    updateTime: new Date(Number(row.update_time_ms)),
  };
}

export function versionFromRow(row: Row): VersionRecord {
  const lineNumber =
    row.first_invalid_line === null || row.first_invalid_line === undefined ? null : Number(row.first_invalid_line);
  const validation: ValidationRecord = {
    ...EMPTY_VALIDATION,
    totalLines: Number(row.total_lines),
    validLines: Number(row.valid_lines),
    topLevelKeys: JSON.parse(String(row.top_level_keys)) as string[],
    exampleCount: Number(row.example_count),
    estimatedTokenCount: Number(row.estimated_token_count),
    ...(lineNumber !== null ? { firstInvalidLine: { lineNumber, reason: String(row.first_invalid_reason) } } : {}),
    ...(row.format !== null ? { format: String(row.format) as DatasetFormat } : {}),
  };
  return {
    accountId: String(row.account_id),
    datasetId: String(row.dataset_id),
    versionNo: Number(row.version_no),
    state: String(row.state) as DatasetVersionState,
    stored: flag(row.stored),
    owner: row.owner === null ? null : String(row.owner),
    bytes: Number(row.bytes),
    validation,
    createTime: new Date(Number(row.create_time_ms)),
  };
}
