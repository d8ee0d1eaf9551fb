/**
 * What both stores decide about a dataset and its versions the same way: the SQL that reads
 * a version with its dataset's ids, where its file lives, when an upload may still be
 * acknowledged or failed, when a dataset may be validated, and the errors they give.
 */
import path from "node:path";
import { datasetName, type DatasetRecord, type VersionKey, type VersionRecord } from "../datasets.ts";
import { StoreError } from "../errors.ts";

/** A version's columns with its dataset's ids, from VERSION_JOIN. */
export const VERSION_COLUMNS = "d.account_id, d.dataset_id, v.*";
export const VERSION_JOIN = "dataset_versions v JOIN datasets d ON d.seq = v.dataset_seq";

/** The assignments that put a version's validation result back to "not yet validated". */
export const RESET_VALIDATION = `total_lines = 0, valid_lines = 0, example_count = 0, estimated_token_count = 0,
  first_invalid_line = NULL, first_invalid_reason = NULL, top_level_keys = '[]', format = NULL`;

/**
 * An upload is acknowledged only while its version is still being received: recovery in
 * another process may have declared its owner dead (server/datasets/owners.ts) and failed
 * it meanwhile.
 */
export function requireReceiving(version: VersionRecord): void {
  if (version.state !== "DATASET_VERSION_STATE_UPLOADING" || version.stored) {
    throw new StoreError(
      "unavailable",
      `The upload of version ${version.versionNo} was interrupted (its server was taken for dead); upload the file again.`,
    );
  }
}

/** Why a version whose file is not complete cannot be validated. */
export function unstoredProblem(version: VersionRecord, name: string): string {
  if (version.state === "DATASET_VERSION_STATE_UPLOADING")
    return `Version ${version.versionNo} of ${name} is still being uploaded; validate it once its upload has answered.`;
  return `Version ${version.versionNo} of ${name} was never completely uploaded; upload the file again.`;
}

/** A dataset id is taken for good: creating it again fails, even after a delete. */
export function datasetTakenError(accountId: string, datasetId: string, cause?: unknown): StoreError {
  return new StoreError(
    "already-exists",
    `The dataset ${datasetName(accountId, datasetId)} already exists (an id stays taken after a delete).`,
    { field: "datasetId", ...(cause === undefined ? {} : { cause }) },
  );
}

/** A dataset that does not exist. */
export function datasetNotFoundError(accountId: string, datasetId: string): StoreError {
  return new StoreError("not-found", `The dataset ${datasetName(accountId, datasetId)} does not exist.`, {
    field: "dataset",
  });
}

/** A deleted dataset takes no new version. */
export function requireUploadable(dataset: DatasetRecord): void {
  if (dataset.state === "DATASET_STATE_DELETED") {
    throw new StoreError(
      "dataset-unusable",
      `The dataset ${datasetName(dataset.accountId, dataset.datasetId)} is deleted; create a new dataset to upload rows.`,
    );
  }
}

/** A version that does not exist. */
export function versionNotFoundError(key: VersionKey): StoreError {
  return new StoreError(
    "not-found",
    `Version ${key.versionNo} of ${datasetName(key.accountId, key.datasetId)} does not exist.`,
    { field: "version" },
  );
}

/** A dataset's latest version may be validated only while the dataset is not deleted and once it has a version. */
export function requireValidatable(dataset: DatasetRecord, name: string): void {
  if (dataset.state === "DATASET_STATE_DELETED")
    throw new StoreError("dataset-unusable", `The dataset ${name} is deleted.`);
  if (dataset.latestVersionNo === 0)
    throw new StoreError(
      "dataset-unusable",
      `The dataset ${name} has no version yet; upload a file first (POST ${name}:upload).`,
    );
}

/** An upload may be failed only by its owner, while it is still being received and its file is not complete. */
export function uploadFailableBy(version: VersionRecord, owner: string | null): boolean {
  return !version.stored && version.state === "DATASET_VERSION_STATE_UPLOADING" && version.owner === owner;
}

/** Where a version's rows are kept under the datasets directory. */
export function versionFilePath(filesDir: string, key: VersionKey): string {
  return path.join(filesDir, safeSegment(key.accountId), safeSegment(key.datasetId), `${key.versionNo}.jsonl`);
}

/**
 * One path segment from an id. Ids are checked where they are created ([a-z0-9-]); this
 * keeps a file inside the datasets directory whatever an id holds.
 */
function safeSegment(id: string): string {
  return encodeURIComponent(id).replace(/^\./, "%2E");
}
