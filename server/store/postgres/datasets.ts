/**
 * Datasets and versions in PostgreSQL, files under DATA_DIR/datasets/ (a directory every
 * process reaches). The same records and rules as sqlite/datasets.ts.
 *
 * Every method that changes a version locks its dataset's row first (SELECT … FOR UPDATE)
 * and brings the dataset's state, latest version and byte total up to date in the same
 * transaction. The lock plays the part of SQLite's BEGIN IMMEDIATE: two processes changing
 * versions of one dataset take turns (two uploads get versions n+1 and n+2), while work on
 * other datasets goes on in parallel.
 */
import path from "node:path";
import type pg from "pg";
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
import { inTransaction, isDuplicate, pgCall, query, queryOne, type Db, type Row } from "./database.ts";

export class PostgresDatasetStore implements DatasetStore {
  readonly #pool: pg.Pool;
  readonly #filesDir: string;

  constructor(pool: pg.Pool, dataDir: string) {
    this.#pool = pool;
    this.#filesDir = path.join(dataDir, "datasets");
  }

  create(dataset: NewDataset): Promise<DatasetRecord> {
    return pgCall(async () => {
      try {
        const row = await queryOne(
          this.#pool,
          `INSERT INTO datasets (account_id, dataset_id, display_name, source, state, latest_version_no, total_bytes, create_time_ms, update_time_ms)
           VALUES ($1, $2, $3, $4, 'DATASET_STATE_CREATING', 0, 0, $5, $5) RETURNING *`,
          [dataset.accountId, dataset.datasetId, dataset.displayName, dataset.source, dataset.now.getTime()],
        );
        return datasetFromRow(row as Row);
      } catch (error) {
        if (isDuplicate(error)) {
          throw datasetTakenError(dataset.accountId, dataset.datasetId, error);
        }
        throw error;
      }
    });
  }

  get(accountId: string, datasetId: string): Promise<DatasetRecord | undefined> {
    return pgCall(() => findDataset(this.#pool, accountId, datasetId));
  }

  list(accountId: string, query_: DatasetQuery): Promise<{ datasets: DatasetRecord[]; total: number }> {
    return pgCall(async () => {
      const where = ["account_id = $1", query_.state === undefined ? "state <> 'DATASET_STATE_DELETED'" : "state = $2"];
      const params: unknown[] = query_.state === undefined ? [accountId] : [accountId, query_.state];
      const total = Number(
        (await queryOne(this.#pool, `SELECT COUNT(*) AS n FROM datasets WHERE ${where.join(" AND ")}`, params))?.n ?? 0,
      );
      if (query_.beforeSeq !== undefined) {
        params.push(query_.beforeSeq);
        where.push(`seq < $${params.length}`);
      }
      params.push(query_.limit);
      const rows = await query(
        this.#pool,
        `SELECT * FROM datasets WHERE ${where.join(" AND ")} ORDER BY seq DESC LIMIT $${params.length}`,
        params,
      );
      return { datasets: rows.map(datasetFromRow), total };
    });
  }

  markDeleted(accountId: string, datasetId: string, now: Date): Promise<DatasetRecord> {
    return pgCall(() =>
      inTransaction(this.#pool, async (db) => {
        const dataset = await lockDataset(db, accountId, datasetId);
        if (dataset.state === "DATASET_STATE_DELETED") return dataset;
        const row = await queryOne(
          db,
          "UPDATE datasets SET state = 'DATASET_STATE_DELETED', update_time_ms = $1 WHERE seq = $2 RETURNING *",
          [now.getTime(), dataset.seq],
        );
        return datasetFromRow(row as Row);
      }),
    );
  }

  listVersions(accountId: string, datasetId: string): Promise<VersionRecord[]> {
    return pgCall(async () =>
      (
        await query(
          this.#pool,
          `SELECT ${VERSION_COLUMNS} FROM ${VERSION_JOIN} WHERE d.account_id = $1 AND d.dataset_id = $2 ORDER BY v.version_no`,
          [accountId, datasetId],
        )
      ).map(versionFromRow),
    );
  }

  getVersion(key: VersionKey): Promise<VersionRecord | undefined> {
    return pgCall(() => findVersion(this.#pool, key));
  }

  versionFile(key: VersionKey): string {
    return versionFilePath(this.#filesDir, key);
  }

  beginUpload(accountId: string, datasetId: string, owner: string, now: Date): Promise<VersionRecord> {
    return pgCall(() =>
      inTransaction(this.#pool, async (db) => {
        const dataset = await lockDataset(db, accountId, datasetId);
        requireUploadable(dataset);
        const versionNo = dataset.latestVersionNo + 1;
        await db.query(
          `INSERT INTO dataset_versions (dataset_seq, version_no, state, stored, owner, bytes, total_lines, valid_lines, example_count, estimated_token_count, top_level_keys, create_time_ms, update_time_ms)
           VALUES ($1, $2, 'DATASET_VERSION_STATE_UPLOADING', false, $3, 0, 0, 0, 0, 0, '[]', $4, $4)`,
          [dataset.seq, versionNo, owner, now.getTime()],
        );
        await syncDataset(db, dataset.seq, now);
        return requireVersion(db, { accountId, datasetId, versionNo });
      }),
    );
  }

  completeUpload(key: VersionKey, bytes: number, now: Date): Promise<VersionRecord> {
    return pgCall(() =>
      inTransaction(this.#pool, async (db) => {
        const { seq } = await lockDataset(db, key.accountId, key.datasetId);
        requireReceiving(await requireVersion(db, key));
        await db.query(
          "UPDATE dataset_versions SET stored = true, owner = NULL, bytes = $1, update_time_ms = $2 WHERE dataset_seq = $3 AND version_no = $4",
          [bytes, now.getTime(), seq, key.versionNo],
        );
        await syncDataset(db, seq, now);
        return requireVersion(db, key);
      }),
    );
  }

  abandonUpload(key: VersionKey, reason: string, now: Date): Promise<void> {
    return pgCall(() =>
      inTransaction(this.#pool, async (db) => {
        const dataset = await lockDataset(db, key.accountId, key.datasetId, false);
        const version = dataset && (await findVersion(db, key));
        if (!dataset || !version || version.stored) return;
        if (dataset.latestVersionNo === key.versionNo) {
          await db.query("DELETE FROM dataset_versions WHERE dataset_seq = $1 AND version_no = $2", [
            dataset.seq,
            key.versionNo,
          ]);
        } else {
          await markUploadFailed(db, dataset.seq, key.versionNo, reason, now);
        }
        await syncDataset(db, dataset.seq, now);
      }),
    );
  }

  startValidation(
    accountId: string,
    datasetId: string,
    owner: string,
    now: Date,
  ): Promise<{ dataset: DatasetRecord; version: VersionRecord }> {
    return pgCall(() =>
      inTransaction(this.#pool, async (db) => {
        const dataset = await lockDataset(db, accountId, datasetId);
        const name = datasetName(accountId, datasetId);
        requireValidatable(dataset, name);
        const key = { accountId, datasetId, versionNo: dataset.latestVersionNo };
        const version = await requireVersion(db, key);
        if (!version.stored) throw new StoreError("dataset-unusable", unstoredProblem(version, name));
        if (version.state !== "DATASET_VERSION_STATE_VALIDATING") {
          await db.query(
            `UPDATE dataset_versions SET state = 'DATASET_VERSION_STATE_VALIDATING', owner = $1, ${RESET_VALIDATION}, update_time_ms = $2
             WHERE dataset_seq = $3 AND version_no = $4`,
            [owner, now.getTime(), dataset.seq, key.versionNo],
          );
          await syncDataset(db, dataset.seq, now);
        }
        return { dataset: await requireDataset(db, accountId, datasetId), version: await requireVersion(db, key) };
      }),
    );
  }

  claimValidation(key: VersionKey, from: string | null, to: string): Promise<boolean> {
    return pgCall(async () => {
      // One statement: of two processes taking over the same dead owner's work, one wins.
      const result = await this.#pool.query(
        `UPDATE dataset_versions SET owner = $1
         WHERE state = 'DATASET_VERSION_STATE_VALIDATING' AND owner IS NOT DISTINCT FROM $2 AND version_no = $3
           AND dataset_seq = (SELECT seq FROM datasets WHERE account_id = $4 AND dataset_id = $5)`,
        [to, from, key.versionNo, key.accountId, key.datasetId],
      );
      return result.rowCount === 1;
    });
  }

  finishValidation(key: VersionKey, result: ValidationRecord, now: Date): Promise<VersionRecord | undefined> {
    return pgCall(() =>
      inTransaction(this.#pool, async (db) => {
        const dataset = await lockDataset(db, key.accountId, key.datasetId, false);
        const version = dataset && (await findVersion(db, key));
        if (!dataset || version?.state !== "DATASET_VERSION_STATE_VALIDATING") return undefined;
        const state: DatasetVersionState = result.firstInvalidLine
          ? "DATASET_VERSION_STATE_FAILED"
          : "DATASET_VERSION_STATE_READY";
        await db.query(
          `UPDATE dataset_versions SET state = $1, total_lines = $2, valid_lines = $3, example_count = $4, estimated_token_count = $5,
             first_invalid_line = $6, first_invalid_reason = $7, top_level_keys = $8, format = $9, owner = NULL, update_time_ms = $10
           WHERE dataset_seq = $11 AND version_no = $12`,
          [
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
          ],
        );
        await syncDataset(db, dataset.seq, now);
        return requireVersion(db, key);
      }),
    );
  }

  versionsInState(state: DatasetVersionState, stored?: boolean): Promise<VersionRecord[]> {
    return pgCall(async () => {
      const storedClause = stored === undefined ? "" : ` AND v.stored = ${stored ? "true" : "false"}`;
      const rows = await query(
        this.#pool,
        `SELECT ${VERSION_COLUMNS} FROM ${VERSION_JOIN} WHERE v.state = $1${storedClause} ORDER BY v.create_time_ms, d.seq, v.version_no`,
        [state],
      );
      return rows.map(versionFromRow);
    });
  }

  failUpload(key: VersionKey, owner: string | null, reason: string, now: Date): Promise<void> {
    return pgCall(() =>
      inTransaction(this.#pool, async (db) => {
        const dataset = await lockDataset(db, key.accountId, key.datasetId, false);
        const version = dataset && (await findVersion(db, key));
        if (!dataset || !version || !uploadFailableBy(version, owner)) return;
        await markUploadFailed(db, dataset.seq, key.versionNo, reason, now);
        await syncDataset(db, dataset.seq, now);
      }),
    );
  }
}

async function markUploadFailed(
  db: Db,
  datasetSeq: number,
  versionNo: number,
  reason: string,
  now: Date,
): Promise<void> {
  await db.query(
    // As RESET_VALIDATION, but with the reason (PostgreSQL refuses two assignments to one column).
    `UPDATE dataset_versions SET state = 'DATASET_VERSION_STATE_FAILED', total_lines = 0, valid_lines = 0, example_count = 0, estimated_token_count = 0,
       first_invalid_line = 0, first_invalid_reason = $1, top_level_keys = '[]', format = NULL, owner = NULL, bytes = 0, update_time_ms = $2
     WHERE dataset_seq = $3 AND version_no = $4`,
    [reason, now.getTime(), datasetSeq, versionNo],
  );
}

/**
 * Brings the dataset's derived columns up to date with its versions: the newest version
 * number, the bytes over all versions, and the newest version's state (DELETED stays).
 */
async function syncDataset(db: Db, seq: number, now: Date): Promise<void> {
  const summary = await queryOne(
    db,
    "SELECT MAX(version_no) AS latest, COALESCE(SUM(bytes), 0) AS bytes FROM dataset_versions WHERE dataset_seq = $1",
    [seq],
  );
  const latest = intOrNull(summary?.latest) ?? 0;
  const newest =
    latest === 0
      ? undefined
      : await queryOne(db, "SELECT state FROM dataset_versions WHERE dataset_seq = $1 AND version_no = $2", [
          seq,
          latest,
        ]);
  const state: DatasetState = newest ? datasetStateOf(newest.state as DatasetVersionState) : "DATASET_STATE_CREATING";
  await db.query(
    `UPDATE datasets SET latest_version_no = $1, total_bytes = $2, update_time_ms = $3,
       state = CASE WHEN state = 'DATASET_STATE_DELETED' THEN state ELSE $4 END
     WHERE seq = $5`,
    [latest, Number(summary?.bytes ?? 0), now.getTime(), state, seq],
  );
}

async function findDataset(db: Db, accountId: string, datasetId: string): Promise<DatasetRecord | undefined> {
  const row = await queryOne(db, "SELECT * FROM datasets WHERE account_id = $1 AND dataset_id = $2", [
    accountId,
    datasetId,
  ]);
  return row && datasetFromRow(row);
}

async function requireDataset(db: Db, accountId: string, datasetId: string): Promise<DatasetRecord> {
  const dataset = await findDataset(db, accountId, datasetId);
  if (!dataset) throw datasetNotFoundError(accountId, datasetId);
  return dataset;
}

/** The dataset, its row locked until the transaction ends; `not-found` when missing (unless `required` is false). */
async function lockDataset(db: Db, accountId: string, datasetId: string): Promise<DatasetRecord>;
async function lockDataset(
  db: Db,
  accountId: string,
  datasetId: string,
  required: false,
): Promise<DatasetRecord | undefined>;
async function lockDataset(
  db: Db,
  accountId: string,
  datasetId: string,
  required = true,
): Promise<DatasetRecord | undefined> {
  const row = await queryOne(db, "SELECT * FROM datasets WHERE account_id = $1 AND dataset_id = $2 FOR UPDATE", [
    accountId,
    datasetId,
  ]);
  if (!row && required) throw datasetNotFoundError(accountId, datasetId);
  return row && datasetFromRow(row);
}

async function findVersion(db: Db, key: VersionKey): Promise<VersionRecord | undefined> {
  const row = await queryOne(
    db,
    `SELECT ${VERSION_COLUMNS} FROM ${VERSION_JOIN} WHERE d.account_id = $1 AND d.dataset_id = $2 AND v.version_no = $3`,
    [key.accountId, key.datasetId, key.versionNo],
  );
  return row && versionFromRow(row);
}

async function requireVersion(db: Db, key: VersionKey): Promise<VersionRecord> {
  const version = await findVersion(db, key);
  if (!version) throw versionNotFoundError(key);
  return version;
}
