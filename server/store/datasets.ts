/**
 * Datasets and their versions in the store. The records and most methods belong to the
 * datasets side (server/datasets/); this file is the seam the rest of the server sees.
 *
 * OWNED BY the datasets work: extend freely. The fine-tuning side relies only on what
 * server/datasets/training-data.ts exports.
 *
 * Records hold numbers and Dates; server/datasets/wire.ts turns them into the contract's
 * shapes. A version's rows are a file the store places (`versionFile`); the store records
 * what is known about it, the datasets side writes and reads it.
 *
 * State rules every implementation keeps, each inside the transaction that changes a version:
 * a dataset's state is its newest version's state (CREATING with no version), except that a
 * DELETED dataset stays DELETED.
 */
import { datasetVersionName, resourceName } from "../../common/resource-names.ts";
import type { components } from "../../generated/api.d.ts";

export type DatasetState = components["schemas"]["DatasetState"];
export type DatasetVersionState = components["schemas"]["DatasetVersionState"];
export type DatasetSource = components["schemas"]["DatasetSource"];
export type DatasetFormat = components["schemas"]["DatasetFormat"];

export interface DatasetRecord {
  accountId: string;
  datasetId: string;
  /** Creation order within the store, for newest-first paging. */
  seq: number;
  displayName: string;
  source: DatasetSource;
  state: DatasetState;
  latestVersionNo: number;
  totalBytes: number;
  createTime: Date;
  updateTime: Date;
}

/** Line 0 in `firstInvalidLine` stands for the file as a whole, not one of its lines. */
export const WHOLE_FILE = 0;

/** What validation found; all zero and empty until a validation has finished. */
export interface ValidationRecord {
  totalLines: number;
  validLines: number;
  /** Set on a FAILED version. Line 0 (`WHOLE_FILE`) means the whole file (e.g. an interrupted upload). */
  firstInvalidLine?: { lineNumber: number; reason: string };
  topLevelKeys: string[];
  format?: DatasetFormat;
  exampleCount: number;
  estimatedTokenCount: number;
}

export interface VersionRecord {
  accountId: string;
  datasetId: string;
  versionNo: number;
  state: DatasetVersionState;
  /** Whether the file is complete and on disk: the upload was acknowledged. */
  stored: boolean;
  /**
   * The server process that is receiving the upload or validating the version (an opaque
   * id, server/datasets/owners.ts); work whose owner has died is taken over or failed.
   */
  owner: string | null;
  bytes: number;
  validation: ValidationRecord;
  createTime: Date;
}

export interface NewDataset {
  accountId: string;
  datasetId: string;
  displayName: string;
  source: DatasetSource;
  now: Date;
}

export interface DatasetQuery {
  /** Only datasets in this state; undefined: every state except DELETED (AIP-164). */
  state?: DatasetState;
  /** Only datasets created before this one (the previous page's last), newest first. */
  beforeSeq?: number;
  limit: number;
}

/** A version by its place, for the methods that change one. */
export interface VersionKey {
  accountId: string;
  datasetId: string;
  versionNo: number;
}

export const EMPTY_VALIDATION: ValidationRecord = {
  totalLines: 0,
  validLines: 0,
  topLevelKeys: [],
  exampleCount: 0,
  estimatedTokenCount: 0,
};

export interface DatasetStore {
  /** `already-exists` when the account has used the id before, even for a deleted dataset. */
  create(dataset: NewDataset): Promise<DatasetRecord>;
  get(accountId: string, datasetId: string): Promise<DatasetRecord | undefined>;
  /** Newest first; `total` counts every match over all pages. */
  list(accountId: string, query: DatasetQuery): Promise<{ datasets: DatasetRecord[]; total: number }>;
  /** Marks the dataset DELETED (again: unchanged). `not-found` when missing. */
  markDeleted(accountId: string, datasetId: string, now: Date): Promise<DatasetRecord>;

  /** Every version of the dataset, oldest first. */
  listVersions(accountId: string, datasetId: string): Promise<VersionRecord[]>;
  getVersion(key: VersionKey): Promise<VersionRecord | undefined>;
  /** Where the version's rows are kept (absolute path); the directory may not exist yet. */
  versionFile(key: VersionKey): string;

  /**
   * Adds version n+1, UPLOADING and not yet stored, and moves the dataset to UPLOADING.
   * `not-found` when the dataset is missing; `dataset-unusable` when it is deleted.
   */
  beginUpload(accountId: string, datasetId: string, owner: string, now: Date): Promise<VersionRecord>;
  /** Records the file complete and synced (`stored`), with its size. */
  completeUpload(key: VersionKey, bytes: number, now: Date): Promise<VersionRecord>;
  /**
   * An upload that was never acknowledged: the newest version is removed (as if never
   * begun); an older one (a later upload began meanwhile) becomes FAILED with `reason`.
   */
  abandonUpload(key: VersionKey, reason: string, now: Date): Promise<void>;

  /**
   * Moves the newest version and the dataset to VALIDATING under `owner` and returns both
   * (already VALIDATING: unchanged, owner included). `not-found` when missing;
   * `dataset-unusable` when deleted, without a version, or while the newest upload is still being received.
   */
  startValidation(
    accountId: string,
    datasetId: string,
    owner: string,
    now: Date,
  ): Promise<{ dataset: DatasetRecord; version: VersionRecord }>;
  /** Hands a VALIDATING version from `from` (a dead owner) to `to`; false when it was not `from`'s any more. */
  claimValidation(key: VersionKey, from: string | null, to: string): Promise<boolean>;
  /**
   * Records the result of validating a VALIDATING version: READY when nothing is wrong,
   * else FAILED. Returns undefined (and changes nothing) when it is no longer VALIDATING.
   */
  finishValidation(key: VersionKey, result: ValidationRecord, now: Date): Promise<VersionRecord | undefined>;

  /** Versions in the state, oldest first; `stored` narrows UPLOADING to (un)finished uploads. */
  versionsInState(state: DatasetVersionState, stored?: boolean): Promise<VersionRecord[]>;
  /** Marks an unfinished upload of `owner` (who died) FAILED with `reason`. */
  failUpload(key: VersionKey, owner: string | null, reason: string, now: Date): Promise<void>;
}

export function datasetName(accountId: string, datasetId: string): string {
  return resourceName(accountId, "datasets", datasetId);
}

export function versionName(key: VersionKey): string {
  return datasetVersionName(key.accountId, key.datasetId, key.versionNo);
}

/** The dataset state that mirrors a version state. */
export function datasetStateOf(state: DatasetVersionState): DatasetState {
  return `DATASET_STATE_${state.slice("DATASET_VERSION_STATE_".length)}` as DatasetState;
}
