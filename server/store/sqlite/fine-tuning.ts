/**
 * Fine-tuning jobs, idempotency records, training curves and models in SQLite. A job is
 * one row: the columns the queries need, and the whole record as JSON beside them.
 */
import type { DatabaseSync, SQLInputValue } from "node:sqlite";
import { StoreError } from "../errors.ts";
import {
  ACTIVE_STATES,
  jobName,
  type AccountModel,
  type ClaimedJob,
  type CurvePoint,
  type CurveSeries,
  type FineTuningStore,
  type IdempotencyClaim,
  type JobBill,
  type JobPatch,
  type JobQuery,
  type JobRecord,
  type JobState,
  type JobType,
  type ListedJob,
  outputModelTakenError,
} from "../fine-tuning.ts";
import {
  curvePointFromRow,
  HOLDS_OUTPUT_MODEL,
  modelFromRow,
  parseRecord,
  serializeRecord,
} from "../shared/job-records.ts";
import { withBill } from "../shared/job-bill.ts";
import { inTransaction, storeCall } from "./database.ts";
import { recordCharge } from "./usage.ts";

export class SqliteFineTuningStore implements FineTuningStore {
  readonly #db: DatabaseSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  createJob(job: JobRecord, idempotency?: IdempotencyClaim): Promise<{ job: JobRecord; created: boolean }> {
    return storeCall(() =>
      inTransaction(this.#db, () => {
        if (idempotency) {
          const earlier = this.#idempotent(job.accountId, job.jobType, idempotency);
          if (earlier) return { job: earlier, created: false };
        }
        this.#requireFreeOutputModel(job.accountId, job.config.outputModelId);
        const seq = this.#insert(job);
        if (idempotency) {
          this.#db
            .prepare(
              "INSERT INTO idempotency_records (account_id, collection, idempotency_key, request_hash, job_seq, created_at_ms) VALUES (?, ?, ?, ?, ?, ?)",
            )
            .run(job.accountId, job.jobType, idempotency.key, idempotency.requestHash, seq, Date.now());
        }
        return { job, created: true };
      }),
    );
  }

  findIdempotentJob(accountId: string, jobType: JobType, claim: IdempotencyClaim): Promise<JobRecord | undefined> {
    return storeCall(() => this.#idempotent(accountId, jobType, claim));
  }

  getJob(accountId: string, jobType: JobType, jobId: string): Promise<JobRecord | undefined> {
    return storeCall(() => {
      const row = this.#db
        .prepare("SELECT record FROM training_jobs WHERE account_id = ? AND job_id = ? AND job_type = ?")
        .get(accountId, jobId, jobType);
      return row && parseRecord(row.record);
    });
  }

  listJobs(accountId: string, jobType: JobType, query: JobQuery): Promise<{ jobs: ListedJob[]; total: number }> {
    return storeCall(() => {
      const where = ["account_id = ?", "job_type = ?"];
      const params: SQLInputValue[] = [accountId, jobType];
      if (query.state) {
        where.push("state = ?");
        params.push(query.state);
      }
      const total = Number(
        this.#db.prepare(`SELECT COUNT(*) AS n FROM training_jobs WHERE ${where.join(" AND ")}`).get(...params)?.n ?? 0,
      );
      if (query.afterJob) {
        where.push("seq < ?");
        params.push(query.afterJob.createSeq);
      }
      const rows = this.#db
        .prepare(`SELECT seq, record FROM training_jobs WHERE ${where.join(" AND ")} ORDER BY seq DESC LIMIT ?`)
        .all(...params, query.limit);
      return { jobs: rows.map((row) => ({ ...parseRecord(row.record), createSeq: Number(row.seq) })), total };
    });
  }

  updateJob(
    accountId: string,
    jobId: string,
    patch: JobPatch,
    fromStates?: readonly JobState[],
    leaseOwner?: string,
    bill?: JobBill,
  ): Promise<JobRecord | undefined> {
    return storeCall(() =>
      inTransaction(this.#db, () => this.#update(accountId, jobId, patch, fromStates, leaseOwner, bill)),
    );
  }

  claimJob(owner: string, now: Date, leaseMs: number): Promise<ClaimedJob | undefined> {
    return storeCall(() =>
      inTransaction(this.#db, () => {
        const active = ACTIVE_STATES.map(() => "?").join(", ");
        const row = this.#db
          .prepare(
            `SELECT account_id, job_id, state FROM training_jobs
             WHERE state = 'JOB_STATE_QUEUED' OR (state IN (${active}) AND (lease_until_ms IS NULL OR lease_until_ms < ?))
             ORDER BY seq LIMIT 1`,
          )
          .get(...ACTIVE_STATES, now.getTime());
        if (row === undefined) return undefined;
        const accountId = String(row.account_id);
        const jobId = String(row.job_id);
        const current = this.#require(accountId, jobId);
        const resumed = row.state !== "JOB_STATE_QUEUED";
        const job = this.#update(accountId, jobId, {
          state: "JOB_STATE_RUNNING",
          startTime: current.startTime ?? now,
        }) as JobRecord;
        this.#db
          .prepare("UPDATE training_jobs SET lease_owner = ?, lease_until_ms = ? WHERE account_id = ? AND job_id = ?")
          .run(owner, now.getTime() + leaseMs, accountId, jobId);
        return { job, resumed };
      }),
    );
  }

  renewLease(accountId: string, jobId: string, owner: string, until: Date): Promise<boolean> {
    return storeCall(() => {
      const active = ACTIVE_STATES.map(() => "?").join(", ");
      const result = this.#db
        .prepare(
          `UPDATE training_jobs SET lease_until_ms = ? WHERE account_id = ? AND job_id = ? AND lease_owner = ? AND state IN (${active})`,
        )
        .run(until.getTime(), accountId, jobId, owner, ...ACTIVE_STATES);
      return Number(result.changes) === 1;
    });
  }

  expireQueued(before: Date, now: Date): Promise<number> {
    return storeCall(() =>
      inTransaction(this.#db, () => {
        const rows = this.#db
          .prepare(
            "SELECT account_id, job_id FROM training_jobs WHERE state = 'JOB_STATE_QUEUED' AND create_time_ms < ?",
          )
          .all(before.getTime());
        for (const row of rows) {
          this.#update(
            String(row.account_id),
            String(row.job_id),
            {
              state: "JOB_STATE_EXPIRED",
              completeTime: now,
              stateDetail: "The job waited in the queue longer than the queue allows.",
            },
            ["JOB_STATE_QUEUED"],
          );
        }
        return rows.length;
      }),
    );
  }

  appendCurve(accountId: string, jobId: string, series: CurveSeries, points: CurvePoint[]): Promise<void> {
    return storeCall(() =>
      inTransaction(this.#db, () => {
        const seq = this.#seq(accountId, jobId);
        const insert = this.#db.prepare(
          "INSERT OR REPLACE INTO training_curves (job_seq, series, step, epoch, loss, learning_rate, time_ms) VALUES (?, ?, ?, ?, ?, ?, ?)",
        );
        for (const p of points) insert.run(seq, series, p.step, p.epoch, p.loss, p.learningRate, p.time.getTime());
      }),
    );
  }

  readCurve(accountId: string, jobId: string, series: CurveSeries): Promise<CurvePoint[]> {
    return storeCall(() => {
      const seq = this.#seq(accountId, jobId);
      const rows = this.#db
        .prepare(
          "SELECT step, epoch, loss, learning_rate, time_ms FROM training_curves WHERE job_seq = ? AND series = ? ORDER BY step",
        )
        .all(seq, series);
      return rows.map(curvePointFromRow);
    });
  }

  truncateCurve(accountId: string, jobId: string, series: CurveSeries, afterStep: number): Promise<void> {
    return storeCall(() => {
      this.#db
        .prepare("DELETE FROM training_curves WHERE job_seq = ? AND series = ? AND step > ?")
        .run(this.#seq(accountId, jobId), series, afterStep);
    });
  }

  completeJob(
    accountId: string,
    jobId: string,
    model: AccountModel,
    patch: JobPatch,
    leaseOwner?: string,
    bill?: JobBill,
  ): Promise<JobRecord> {
    return storeCall(() =>
      inTransaction(this.#db, () => {
        this.#db
          .prepare(
            "INSERT INTO account_models (account_id, model_id, base_model, job_name, adapter_path, create_time_ms) VALUES (?, ?, ?, ?, ?, ?)",
          )
          .run(
            model.accountId,
            model.modelId,
            model.baseModel,
            model.jobName,
            model.adapterPath,
            model.createTime.getTime(),
          );
        const job = this.#update(
          accountId,
          jobId,
          { ...patch, state: "JOB_STATE_SUCCEEDED" },
          ACTIVE_STATES,
          leaseOwner,
          bill,
        );
        if (job === undefined) throw new StoreError("job-state", `The job ${jobId} is no longer running.`);
        return job;
      }),
    );
  }

  findModel(accountId: string, modelId: string): Promise<AccountModel | undefined> {
    return storeCall(() => {
      const row = this.#db
        .prepare("SELECT * FROM account_models WHERE account_id = ? AND model_id = ?")
        .get(accountId, modelId);
      return row && modelFromRow(row);
    });
  }

  listModels(accountId: string): Promise<AccountModel[]> {
    return storeCall(() =>
      this.#db
        .prepare("SELECT * FROM account_models WHERE account_id = ? ORDER BY create_time_ms, model_id")
        .all(accountId)
        .map(modelFromRow),
    );
  }

  jobsUsingDataset(
    accountId: string,
    datasetId: string,
  ): Promise<{ name: string; jobType: JobType; state: JobState }[]> {
    return storeCall(() =>
      this.#db
        .prepare(
          `SELECT j.job_id, j.job_type, j.state FROM training_job_datasets d JOIN training_jobs j ON j.seq = d.job_seq
           WHERE d.account_id = ? AND d.dataset_id = ? ORDER BY j.seq DESC`,
        )
        .all(accountId, datasetId)
        .map((r) => ({
          name: jobName(accountId, String(r.job_id)),
          jobType: r.job_type as JobType,
          state: r.state as JobState,
        })),
    );
  }

  // -------------------------------------------------------------------------

  #idempotent(accountId: string, jobType: JobType, claim: IdempotencyClaim): JobRecord | undefined {
    const row = this.#db
      .prepare(
        `SELECT r.request_hash, j.record FROM idempotency_records r JOIN training_jobs j ON j.seq = r.job_seq
         WHERE r.account_id = ? AND r.collection = ? AND r.idempotency_key = ?`,
      )
      .get(accountId, jobType, claim.key);
    if (row === undefined) return undefined;
    if (row.request_hash !== claim.requestHash) {
      throw new StoreError("idempotency-conflict", "This Idempotency-Key was used with a different request body.", {
        field: "Idempotency-Key",
      });
    }
    return parseRecord(row.record);
  }

  async outputModelTaken(accountId: string, modelId: string): Promise<boolean> {
    return this.#taken(accountId, modelId);
  }

  #taken(accountId: string, modelId: string): boolean {
    const states = HOLDS_OUTPUT_MODEL.map(() => "?").join(", ");
    const row =
      this.#db.prepare("SELECT 1 FROM account_models WHERE account_id = ? AND model_id = ?").get(accountId, modelId) ??
      this.#db
        .prepare(`SELECT 1 FROM training_jobs WHERE account_id = ? AND output_model_id = ? AND state IN (${states})`)
        .get(accountId, modelId, ...HOLDS_OUTPUT_MODEL);
    return row !== undefined;
  }

  #requireFreeOutputModel(accountId: string, modelId: string): void {
    if (this.#taken(accountId, modelId)) {
      throw outputModelTakenError(modelId);
    }
  }

  #insert(job: JobRecord): number {
    const result = this.#db
      .prepare(
        "INSERT INTO training_jobs (account_id, job_id, job_type, state, output_model_id, record, create_time_ms) VALUES (?, ?, ?, ?, ?, ?, ?)",
      )
      .run(
        job.accountId,
        job.jobId,
        job.jobType,
        job.state,
        job.config.outputModelId,
        serializeRecord(job),
        job.createTime.getTime(),
      );
    const seq = Number(result.lastInsertRowid);
    this.#linkDatasets(job, seq);
    return seq;
  }

  #linkDatasets(job: JobRecord, seq: number): void {
    const link = this.#db.prepare(
      "INSERT OR IGNORE INTO training_job_datasets (account_id, dataset_id, job_seq) VALUES (?, ?, ?)",
    );
    for (const datasetId of job.datasetIds) link.run(job.accountId, datasetId, seq);
  }

  #update(
    accountId: string,
    jobId: string,
    patch: JobPatch,
    fromStates?: readonly JobState[],
    leaseOwner?: string,
    bill?: JobBill,
  ): JobRecord | undefined {
    const current = this.#require(accountId, jobId);
    if (fromStates && !fromStates.includes(current.state)) return undefined;
    if (leaseOwner !== undefined && this.#leaseOwner(accountId, jobId) !== leaseOwner) return undefined;
    const { job: next, charge } = bill ? withBill({ ...current, ...patch }, bill) : { job: { ...current, ...patch } };
    this.#db
      .prepare("UPDATE training_jobs SET state = ?, record = ? WHERE account_id = ? AND job_id = ?")
      .run(next.state, serializeRecord(next), accountId, jobId);
    if (patch.datasetIds) this.#linkDatasets(next, this.#seq(accountId, jobId));
    if (charge) recordCharge(this.#db, charge);
    return next;
  }

  #leaseOwner(accountId: string, jobId: string): string | null {
    const row = this.#db
      .prepare("SELECT lease_owner FROM training_jobs WHERE account_id = ? AND job_id = ?")
      .get(accountId, jobId);
    return row?.lease_owner === null || row?.lease_owner === undefined ? null : String(row.lease_owner);
  }

  #require(accountId: string, jobId: string): JobRecord {
    const row = this.#db
      .prepare("SELECT record FROM training_jobs WHERE account_id = ? AND job_id = ?")
      .get(accountId, jobId);
    if (row === undefined) throw new StoreError("not-found", `No job ${jobId}.`);
    return parseRecord(row.record);
  }

  #seq(accountId: string, jobId: string): number {
    const row = this.#db
      .prepare("SELECT seq FROM training_jobs WHERE account_id = ? AND job_id = ?")
      .get(accountId, jobId);
    if (row === undefined) throw new StoreError("not-found", `No job ${jobId}.`);
    return Number(row.seq);
  }
}
