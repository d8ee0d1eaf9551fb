/**
 * Datasets and versions in SQLite, files under DATA_DIR/datasets/. OWNED BY the datasets work.
 *
 * Every method that changes a version also brings its dataset's state, latest version
 * and byte total up to date in the same transaction (the rule in ../datasets.ts), so a
 * reader never sees one without the other.
 */
import path from "node:path";
import type { DatabaseSync, SQLInputValue } from "node:sqlite";
import { StoreError } from "../errors.ts";
import {
  datasetName,
  datasetStateOf,
  type DatasetQuery,
  type DatasetRecord,
  type DatasetState,
  type DatasetStore,
  type DatasetVersionState,
  type NewDataset,
  type ValidationRecord,
  type VersionKey,
  type VersionRecord,
} from "../datasets.ts";
import { datasetFromRow, versionFromRow } from "../shared/dataset-rows.ts";
import {
  datasetNotFoundError,
  datasetTakenError,
  requireReceiving,
  requireUploadable,
  requireValidatable,
  RESET_VALIDATION,
  unstoredProblem,
  uploadFailableBy,
  versionNotFoundError,
  VERSION_COLUMNS,
  VERSION_JOIN,
  versionFilePath,
} from "../shared/dataset-versions.ts";
import { intOrNull } from "../shared/columns.ts";
import { inTransaction, isDuplicate, storeCall } from "./database.ts";

export class SqliteDatasetStore implements DatasetStore {
  readonly #db: DatabaseSync;
  readonly #filesDir: string;

  constructor(db: DatabaseSync, dataDir: string) {
    this.#db = db;
    this.#filesDir = path.join(dataDir, "datasets");
  }

  create(dataset: NewDataset): Promise<DatasetRecord> {
    return storeCall(() => {
      try {
        this.#db
          .prepare(
            `INSERT INTO datasets (account_id, dataset_id, display_name, source, state, latest_version_no, total_bytes, create_time_ms, update_time_ms)
             VALUES (?, ?, ?, ?, 'DATASET_STATE_CREATING', 0, 0, ?, ?)`,
          )
          .run(
            dataset.accountId,
            dataset.datasetId,
            dataset.displayName,
            dataset.source,
            dataset.now.getTime(),
            dataset.now.getTime(),
          );
      } catch (error) {
        if (isDuplicate(error)) {
          throw datasetTakenError(dataset.accountId, dataset.datasetId, error);
        }
        throw error;
      }
      return this.#requireDataset(dataset.accountId, dataset.datasetId);
    });
  }

  get(accountId: string, datasetId: string): Promise<DatasetRecord | undefined> {
    return storeCall(() => this.#findDataset(accountId, datasetId));
  }

  list(accountId: string, query: DatasetQuery): Promise<{ datasets: DatasetRecord[]; total: number }> {
    return storeCall(() => {
      const where = ["account_id = ?", query.state === undefined ? "state != 'DATASET_STATE_DELETED'" : "state = ?"];
      const params: SQLInputValue[] = query.state === undefined ? [accountId] : [accountId, query.state];
      const total = Number(
        this.#db.prepare(`SELECT COUNT(*) AS n FROM datasets WHERE ${where.join(" AND ")}`).get(...params)?.n ?? 0,
      );
      if (query.beforeSeq !== undefined) {
        where.push("seq < ?");
        params.push(query.beforeSeq);
      }
      const rows = this.#db
        .prepare(`SELECT * FROM datasets WHERE ${where.join(" AND ")} ORDER BY seq DESC LIMIT ?`)
        .all(...params, query.limit);
      return { datasets: rows.map(datasetFromRow), total };
    });
  }

  markDeleted(accountId: string, datasetId: string, now: Date): Promise<DatasetRecord> {
    return storeCall(() =>
      inTransaction(this.#db, () => {
        const dataset = this.#requireDataset(accountId, datasetId);
        if (dataset.state === "DATASET_STATE_DELETED") return dataset;
        this.#db
          .prepare("UPDATE datasets SET state = 'DATASET_STATE_DELETED', update_time_ms = ? WHERE seq = ?")
          .run(now.getTime(), dataset.seq);
        return this.#requireDataset(accountId, datasetId);
      }),
    );
  }

  listVersions(accountId: string, datasetId: string): Promise<VersionRecord[]> {
    return storeCall(() =>
      this.#db
        .prepare(
          `SELECT ${VERSION_COLUMNS} FROM ${VERSION_JOIN} WHERE d.account_id = ? AND d.dataset_id = ? ORDER BY v.version_no`,
        )
        .all(accountId, datasetId)
        .map(versionFromRow),
    );
  }

  getVersion(key: VersionKey): Promise<VersionRecord | undefined> {
    return storeCall(() => this.#findVersion(key));
  }

  versionFile(key: VersionKey): string {
    return versionFilePath(this.#filesDir, key);
  }

  beginUpload(accountId: string, datasetId: string, owner: string, now: Date): Promise<VersionRecord> {
    return storeCall(() =>
      inTransaction(this.#db, () => {
        const dataset = this.#requireDataset(accountId, datasetId);
        requireUploadable(dataset);
        const versionNo = dataset.latestVersionNo + 1;
        this.#db
          .prepare(
            `INSERT INTO dataset_versions (dataset_seq, version_no, state, stored, owner, bytes, total_lines, valid_lines, example_count, estimated_token_count, top_level_keys, create_time_ms, update_time_ms)
             VALUES (?, ?, 'DATASET_VERSION_STATE_UPLOADING', 0, ?, 0, 0, 0, 0, 0, '[]', ?, ?)`,
          )
          .run(dataset.seq, versionNo, owner, now.getTime(), now.getTime());
        this.#syncDataset(dataset.seq, now);
        return this.#requireVersion({ accountId, datasetId, versionNo });
      }),
    );
  }

  completeUpload(key: VersionKey, bytes: number, now: Date): Promise<VersionRecord> {
    return storeCall(() =>
      inTransaction(this.#db, () => {
        const seq = this.#requireDataset(key.accountId, key.datasetId).seq;
        requireReceiving(this.#requireVersion(key));
        this.#db
          .prepare(
            "UPDATE dataset_versions SET stored = 1, owner = NULL, bytes = ?, update_time_ms = ? WHERE dataset_seq = ? AND version_no = ?",
          )
          .run(bytes, now.getTime(), seq, key.versionNo);
        this.#syncDataset(seq, now);
        return this.#requireVersion(key);
      }),
    );
  }

  abandonUpload(key: VersionKey, reason: string, now: Date): Promise<void> {
    return storeCall(() =>
      inTransaction(this.#db, () => {
        const dataset = this.#findDataset(key.accountId, key.datasetId);
        const version = this.#findVersion(key);
        if (!dataset || !version || version.stored) return;
        if (dataset.latestVersionNo === key.versionNo) {
          this.#db
            .prepare("DELETE FROM dataset_versions WHERE dataset_seq = ? AND version_no = ?")
            .run(dataset.seq, key.versionNo);
        } else {
          this.#markUploadFailed(dataset.seq, key.versionNo, reason, now);
        }
        this.#syncDataset(dataset.seq, now);
      }),
    );
  }

  startValidation(
    accountId: string,
    datasetId: string,
    owner: string,
    now: Date,
  ): Promise<{ dataset: DatasetRecord; version: VersionRecord }> {
    return storeCall(() =>
      inTransaction(this.#db, () => {
        const dataset = this.#requireDataset(accountId, datasetId);
        const name = datasetName(accountId, datasetId);
        requireValidatable(dataset, name);
        const key = { accountId, datasetId, versionNo: dataset.latestVersionNo };
        const version = this.#requireVersion(key);
        if (!version.stored) throw new StoreError("dataset-unusable", unstoredProblem(version, name));
        if (version.state !== "DATASET_VERSION_STATE_VALIDATING") {
          this.#db
            .prepare(
              `UPDATE dataset_versions SET state = 'DATASET_VERSION_STATE_VALIDATING', owner = ?, ${RESET_VALIDATION}, update_time_ms = ?
               WHERE dataset_seq = ? AND version_no = ?`,
            )
            .run(owner, now.getTime(), dataset.seq, key.versionNo);
          this.#syncDataset(dataset.seq, now);
        }
        return { dataset: this.#requireDataset(accountId, datasetId), version: this.#requireVersion(key) };
      }),
    );
  }

  claimValidation(key: VersionKey, from: string | null, to: string): Promise<boolean> {
    return storeCall(() => {
      const changes = this.#db
        .prepare(
          `UPDATE dataset_versions SET owner = ?
           WHERE state = 'DATASET_VERSION_STATE_VALIDATING' AND owner IS ? AND version_no = ?
             AND dataset_seq = (SELECT seq FROM datasets WHERE account_id = ? AND dataset_id = ?)`,
        )
        .run(to, from, key.versionNo, key.accountId, key.datasetId).changes;
      return Number(changes) === 1;
    });
  }

  finishValidation(key: VersionKey, result: ValidationRecord, now: Date): Promise<VersionRecord | undefined> {
    return storeCall(() =>
      inTransaction(this.#db, () => {
        const dataset = this.#findDataset(key.accountId, key.datasetId);
        const version = this.#findVersion(key);
        if (!dataset || version?.state !== "DATASET_VERSION_STATE_VALIDATING") return undefined;
        const state: DatasetVersionState = result.firstInvalidLine
          ? "DATASET_VERSION_STATE_FAILED"
          : "DATASET_VERSION_STATE_READY";
        this.#db
          .prepare(
            `UPDATE dataset_versions SET state = ?, total_lines = ?, valid_lines = ?, example_count = ?, estimated_token_count = ?,
               first_invalid_line = ?, first_invalid_reason = ?, top_level_keys = ?, format = ?, owner = NULL, update_time_ms = ?
             WHERE dataset_seq = ? AND version_no = ?`,
          )
          .run(
            state,
            result.totalLines,
            result.validLines,
            result.exampleCount,
            result.estimatedTokenCount,
            result.firstInvalidLine?.lineNumber ?? null,
            result.firstInvalidLine?.reason ?? null,
            JSON.stringify(result.topLevelKeys),
            result.format ?? null,
            now.getTime(),
            dataset.seq,
            key.versionNo,
          );
        this.#syncDataset(dataset.seq, now);
        return this.#requireVersion(key);
      }),
    );
  }

  versionsInState(state: DatasetVersionState, stored?: boolean): Promise<VersionRecord[]> {
    return storeCall(() => {
      const storedClause = stored === undefined ? "" : ` AND v.stored = ${stored ? 1 : 0}`;
      return this.#db
        .prepare(
          `SELECT ${VERSION_COLUMNS} FROM ${VERSION_JOIN} WHERE v.state = ?${storedClause} ORDER BY v.create_time_ms, d.seq, v.version_no`,
        )
        .all(state)
        .map(versionFromRow);
    });
  }

  failUpload(key: VersionKey, owner: string | null, reason: string, now: Date): Promise<void> {
    return storeCall(() =>
      inTransaction(this.#db, () => {
        const dataset = this.#findDataset(key.accountId, key.datasetId);
        const version = this.#findVersion(key);
        if (!dataset || !version || !uploadFailableBy(version, owner)) return;
        this.#markUploadFailed(dataset.seq, key.versionNo, reason, now);
        this.#syncDataset(dataset.seq, now);
      }),
    );
  }

  #markUploadFailed(datasetSeq: number, versionNo: number, reason: string, now: Date): void {
    this.#db
      .prepare(
        `UPDATE dataset_versions SET state = 'DATASET_VERSION_STATE_FAILED', ${RESET_VALIDATION}, owner = NULL, bytes = 0, first_invalid_line = 0, first_invalid_reason = ?, update_time_ms = ?
         WHERE dataset_seq = ? AND version_no = ?`,
      )
      .run(reason, now.getTime(), datasetSeq, versionNo);
  }

  /**
   * Brings the dataset's derived columns up to date with its versions: the newest version
   * number, the bytes over all versions, and the newest version's state (DELETED stays).
   */
  #syncDataset(seq: number, now: Date): void {
    const summary = this.#db
      .prepare(
        "SELECT MAX(version_no) AS latest, COALESCE(SUM(bytes), 0) AS bytes FROM dataset_versions WHERE dataset_seq = ?",
      )
      .get(seq) as { latest: number | bigint | null; bytes: number | bigint };
    const latest = intOrNull(summary.latest) ?? 0;
    const newest =
      latest === 0
        ? undefined
        : this.#db
            .prepare("SELECT state FROM dataset_versions WHERE dataset_seq = ? AND version_no = ?")
            .get(seq, latest);
    const state: DatasetState = newest ? datasetStateOf(newest.state as DatasetVersionState) : "DATASET_STATE_CREATING";
    this.#db
      .prepare(
        `UPDATE datasets SET latest_version_no = ?, total_bytes = ?, update_time_ms = ?,
           state = CASE WHEN state = 'DATASET_STATE_DELETED' THEN state ELSE ? END
         WHERE seq = ?`,
      )
      .run(latest, Number(summary.bytes), now.getTime(), state, seq);
  }

  #findDataset(accountId: string, datasetId: string): DatasetRecord | undefined {
    const row = this.#db
      .prepare("SELECT * FROM datasets WHERE account_id = ? AND dataset_id = ?")
      .get(accountId, datasetId);
    return row && datasetFromRow(row);
  }

  #requireDataset(accountId: string, datasetId: string): DatasetRecord {
    const dataset = this.#findDataset(accountId, datasetId);
    if (!dataset) throw datasetNotFoundError(accountId, datasetId);
    return dataset;
  }

  #findVersion(key: VersionKey): VersionRecord | undefined {
    const row = this.#db
      .prepare(
        `SELECT ${VERSION_COLUMNS} FROM ${VERSION_JOIN} WHERE d.account_id = ? AND d.dataset_id = ? AND v.version_no = ?`,
      )
      .get(key.accountId, key.datasetId, key.versionNo);
    return row && versionFromRow(row);
  }

  #requireVersion(key: VersionKey): VersionRecord {
    const version = this.#findVersion(key);
    if (!version) throw versionNotFoundError(key);
    return version;
  }
}
