/**
 * Dataset records (numbers and Dates) as the contract's shapes: 64-bit counts as decimal
 * strings, times as RFC 3339, `versions` and `jobs` only in the full view.
 */
import type { components } from "../../generated/api.d.ts";
import { datasetName, versionName, WHOLE_FILE, type DatasetRecord, type VersionRecord } from "../store/datasets.ts";

type Schemas = components["schemas"];

export function toDataset(
  record: DatasetRecord,
  full?: { versions: VersionRecord[]; jobs: Schemas["DatasetJobRef"][] },
): Schemas["Dataset"] {
  return {
    name: datasetName(record.accountId, record.datasetId),
    datasetId: record.datasetId,
    displayName: record.displayName,
    source: record.source,
    state: record.state,
    latestVersionNo: record.latestVersionNo,
    totalBytes: String(record.totalBytes),
    createTime: record.createTime.toISOString(),
    updateTime: record.updateTime.toISOString(),
    ...(full ? { versions: full.versions.map(toDatasetVersion), jobs: full.jobs } : {}),
  };
}

export function toDatasetVersion(record: VersionRecord): Schemas["DatasetVersion"] {
  const { validation } = record;
  return {
    name: versionName(record),
    versionNo: record.versionNo,
    bytes: String(record.bytes),
    exampleCount: String(validation.exampleCount),
    estimatedTokenCount: String(validation.estimatedTokenCount),
    state: record.state,
    validation: {
      totalLines: String(validation.totalLines),
      validLines: String(validation.validLines),
      ...failure(validation.firstInvalidLine),
    },
    topLevelKeys: validation.topLevelKeys,
    ...(validation.format ? { format: validation.format } : {}),
    createTime: record.createTime.toISOString(),
  };
}

/**
 * Why a version failed: its first bad line, or, when no line is to blame (the store keeps
 * those as line 0: an upload with no rows, an interrupted one), `failureReason` alone, so
 * that no line number is invented.
 */
function failure(line: { lineNumber: number; reason: string } | undefined) {
  if (line === undefined) return {};
  if (line.lineNumber === WHOLE_FILE) return { failureReason: line.reason };
  return { firstInvalidLine: { lineNumber: String(line.lineNumber), reason: line.reason } };
}
