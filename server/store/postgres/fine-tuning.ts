/**
 * Fine-tuning jobs, idempotency records, training curves and models in PostgreSQL: the
 * job queue that any number of server processes and training workers share. The same
 * records and rules as sqlite/fine-tuning.ts; a job is one row, the columns the queries
 * need beside the whole record as JSON.
 *
 * What SQLite got from BEGIN IMMEDIATE (one writer at a time) is done here with locks:
 * - job changes lock the job's row (SELECT … FOR UPDATE), so a cancel and a runner's
 *   progress update cannot both apply to the state they each read;
 * - job creation takes a per-account advisory lock, so the idempotency record and the
 *   output-model check are decided one request at a time within an account, whichever
 *   server process received it;
 * - claiming takes the oldest claimable row with FOR UPDATE SKIP LOCKED: two workers
 *   polling at once get two different jobs (or one gets none), never the same one.
 */
import type pg from "pg";
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
import { inTransaction, pgCall, query, queryOne, type Db } from "./database.ts";
import { recordCharge } from "./usage.ts";

export class PostgresFineTuningStore implements FineTuningStore {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  outputModelTaken(accountId: string, modelId: string): Promise<boolean> {
    return pgCall(() => outputModelTaken(this.#pool, accountId, modelId));
  }

  findIdempotentJob(accountId: string, jobType: JobType, claim: IdempotencyClaim): Promise<JobRecord | undefined> {
    return pgCall(() => findIdempotent(this.#pool, accountId, jobType, claim));
  }

  createJob(job: JobRecord, idempotency?: IdempotencyClaim): Promise<{ job: JobRecord; created: boolean }> {
    return pgCall(() =>
      inTransaction(this.#pool, async (db) => {
        // Held until COMMIT: a concurrent create in the same account (same Idempotency-Key
        // or same output model id) waits here, then sees this one's rows.
        await db.query("SELECT pg_advisory_xact_lock(hashtext('training-job-create:' || $1))", [job.accountId]);
        if (idempotency) {
          const earlier = await findIdempotent(db, job.accountId, job.jobType, idempotency);
          if (earlier) return { job: earlier, created: false };
        }
        await requireFreeOutputModel(db, job.accountId, job.config.outputModelId);
        const seq = await insertJob(db, job);
        if (idempotency) {
          await db.query(
            "INSERT INTO idempotency_records (account_id, collection, idempotency_key, request_hash, job_seq, created_at_ms) VALUES ($1, $2, $3, $4, $5, $6)",
            [job.accountId, job.jobType, idempotency.key, idempotency.requestHash, seq, Date.now()],
          );
        }
        return { job, created: true };
      }),
    );
  }

  getJob(accountId: string, jobType: JobType, jobId: string): Promise<JobRecord | undefined> {
    return pgCall(async () => {
      const row = await queryOne(
        this.#pool,
        "SELECT record FROM training_jobs WHERE account_id = $1 AND job_id = $2 AND job_type = $3",
        [accountId, jobId, jobType],
      );
      return row && parseRecord(row.record as string);
    });
  }

  listJobs(accountId: string, jobType: JobType, query_: JobQuery): Promise<{ jobs: ListedJob[]; total: number }> {
    return pgCall(async () => {
      const where = ["account_id = $1", "job_type = $2"];
      const params: unknown[] = [accountId, jobType];
      if (query_.state) {
        params.push(query_.state);
        where.push(`state = $${params.length}`);
      }
      const total = Number(
        (await queryOne(this.#pool, `SELECT COUNT(*) AS n FROM training_jobs WHERE ${where.join(" AND ")}`, params))
          ?.n ?? 0,
      );
      if (query_.afterJob) {
        params.push(query_.afterJob.createSeq);
        where.push(`seq < $${params.length}`);
      }
      params.push(query_.limit);
      const rows = await query(
        this.#pool,
        `SELECT seq, record FROM training_jobs WHERE ${where.join(" AND ")} ORDER BY seq DESC LIMIT $${params.length}`,
        params,
      );
      return { jobs: rows.map((row) => ({ ...parseRecord(row.record as string), createSeq: Number(row.seq) })), total };
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
    return pgCall(() =>
      inTransaction(this.#pool, (db) => updateLocked(db, accountId, jobId, patch, fromStates, leaseOwner, bill)),
    );
  }

  claimJob(owner: string, now: Date, leaseMs: number): Promise<ClaimedJob | undefined> {
    return pgCall(() =>
      inTransaction(this.#pool, async (db) => {
        // SKIP LOCKED: a row another worker is claiming right now is passed over, not waited
        // for. FOR UPDATE re-checks the WHERE on the newest row version, so a job whose lease
        // was just renewed or that was just claimed and committed is not taken.
        const row = await queryOne(
          db,
          `SELECT account_id, job_id, state, record FROM training_jobs
           WHERE state = 'JOB_STATE_QUEUED' OR (state = ANY($1) AND (lease_until_ms IS NULL OR lease_until_ms < $2))
           ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED`,
          [ACTIVE_STATES, now.getTime()],
        );
        if (row === undefined) return undefined;
        const current = parseRecord(row.record as string);
        const resumed = row.state !== "JOB_STATE_QUEUED";
        const job: JobRecord = { ...current, state: "JOB_STATE_RUNNING", startTime: current.startTime ?? now };
        await db.query(
          "UPDATE training_jobs SET state = $1, record = $2, lease_owner = $3, lease_until_ms = $4 WHERE account_id = $5 AND job_id = $6",
          [job.state, serializeRecord(job), owner, now.getTime() + leaseMs, job.accountId, job.jobId],
        );
        return { job, resumed };
      }),
    );
  }

  renewLease(accountId: string, jobId: string, owner: string, until: Date): Promise<boolean> {
    return pgCall(async () => {
      const result = await this.#pool.query(
        "UPDATE training_jobs SET lease_until_ms = $1 WHERE account_id = $2 AND job_id = $3 AND lease_owner = $4 AND state = ANY($5)",
        [until.getTime(), accountId, jobId, owner, ACTIVE_STATES],
      );
      return result.rowCount === 1;
    });
  }

  expireQueued(before: Date, now: Date): Promise<number> {
    return pgCall(() =>
      inTransaction(this.#pool, async (db) => {
        // Every runner calls this on every poll; SKIP LOCKED keeps them from queueing on each other.
        const rows = await query(
          db,
          "SELECT account_id, job_id FROM training_jobs WHERE state = 'JOB_STATE_QUEUED' AND create_time_ms < $1 FOR UPDATE SKIP LOCKED",
          [before.getTime()],
        );
        let expired = 0;
        for (const row of rows) {
          const patch: JobPatch = {
            state: "JOB_STATE_EXPIRED",
            completeTime: now,
            stateDetail: "The job waited in the queue longer than the queue allows.",
          };
          if (await updateLocked(db, String(row.account_id), String(row.job_id), patch, ["JOB_STATE_QUEUED"]))
            expired++;
        }
        return expired;
      }),
    );
  }

  appendCurve(accountId: string, jobId: string, series: CurveSeries, points: CurvePoint[]): Promise<void> {
    return pgCall(async () => {
      const seq = await jobSeq(this.#pool, accountId, jobId);
      if (points.length === 0) return;
      // One statement for the batch; a point recorded again (a resumed job) replaces the old one.
      await this.#pool.query(
        `INSERT INTO training_curves (job_seq, series, step, epoch, loss, learning_rate, time_ms)
         SELECT $1, $2, p.* FROM unnest($3::int[], $4::int[], $5::float8[], $6::float8[], $7::bigint[]) AS p
         ON CONFLICT (job_seq, series, step) DO UPDATE SET epoch = EXCLUDED.epoch, loss = EXCLUDED.loss, learning_rate = EXCLUDED.learning_rate, time_ms = EXCLUDED.time_ms`,
        [
          seq,
          series,
          points.map((p) => p.step),
          points.map((p) => p.epoch),
          points.map((p) => p.loss),
          points.map((p) => p.learningRate),
          points.map((p) => p.time.getTime()),
        ],
      );
    });
  }

  readCurve(accountId: string, jobId: string, series: CurveSeries): Promise<CurvePoint[]> {
    return pgCall(async () => {
      const seq = await jobSeq(this.#pool, accountId, jobId);
      const rows = await query(
        this.#pool,
        "SELECT step, epoch, loss, learning_rate, time_ms FROM training_curves WHERE job_seq = $1 AND series = $2 ORDER BY step",
        [seq, series],
      );
      return rows.map(curvePointFromRow);
    });
  }

  truncateCurve(accountId: string, jobId: string, series: CurveSeries, afterStep: number): Promise<void> {
    return pgCall(async () => {
      await this.#pool.query("DELETE FROM training_curves WHERE job_seq = $1 AND series = $2 AND step > $3", [
        await jobSeq(this.#pool, accountId, jobId),
        series,
        afterStep,
      ]);
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
    return pgCall(() =>
      inTransaction(this.#pool, async (db) => {
        await db.query(
          "INSERT INTO account_models (account_id, model_id, base_model, job_name, adapter_path, create_time_ms) VALUES ($1, $2, $3, $4, $5, $6)",
          [
            model.accountId,
            model.modelId,
            model.baseModel,
            model.jobName,
            model.adapterPath,
            model.createTime.getTime(),
          ],
        );
        const job = await updateLocked(
          db,
          accountId,
          jobId,
          { ...patch, state: "JOB_STATE_SUCCEEDED" },
          ACTIVE_STATES,
          leaseOwner,
          bill,
        );
        // Thrown inside the transaction: the model row is rolled back with it.
        if (job === undefined) throw new StoreError("job-state", `The job ${jobId} is no longer running.`);
        return job;
      }),
    );
  }

  findModel(accountId: string, modelId: string): Promise<AccountModel | undefined> {
    return pgCall(async () => {
      const row = await queryOne(this.#pool, "SELECT * FROM account_models WHERE account_id = $1 AND model_id = $2", [
        accountId,
        modelId,
      ]);
      return row && modelFromRow(row);
    });
  }

  listModels(accountId: string): Promise<AccountModel[]> {
    return pgCall(async () =>
      (
        await query(
          this.#pool,
          "SELECT * FROM account_models WHERE account_id = $1 ORDER BY create_time_ms, model_id",
          [accountId],
        )
      ).map(modelFromRow),
    );
  }

  jobsUsingDataset(
    accountId: string,
    datasetId: string,
  ): Promise<{ name: string; jobType: JobType; state: JobState }[]> {
    return pgCall(async () => {
      const rows = await query(
        this.#pool,
        `SELECT j.job_id, j.job_type, j.state FROM training_job_datasets d JOIN training_jobs j ON j.seq = d.job_seq
         WHERE d.account_id = $1 AND d.dataset_id = $2 ORDER BY j.seq DESC`,
        [accountId, datasetId],
      );
      return rows.map((r) => ({
        name: jobName(accountId, String(r.job_id)),
        jobType: r.job_type as JobType,
        state: r.state as JobState,
      }));
    });
  }
}

async function findIdempotent(
  db: Db,
  accountId: string,
  jobType: JobType,
  claim: IdempotencyClaim,
): Promise<JobRecord | undefined> {
  const row = await queryOne(
    db,
    `SELECT r.request_hash, j.record FROM idempotency_records r JOIN training_jobs j ON j.seq = r.job_seq
     WHERE r.account_id = $1 AND r.collection = $2 AND r.idempotency_key = $3`,
    [accountId, jobType, claim.key],
  );
  if (row === undefined) return undefined;
  if (row.request_hash !== claim.requestHash) {
    throw new StoreError("idempotency-conflict", "This Idempotency-Key was used with a different request body.", {
      field: "Idempotency-Key",
    });
  }
  return parseRecord(row.record as string);
}

async function outputModelTaken(db: Db, accountId: string, modelId: string): Promise<boolean> {
  const row =
    (await queryOne(db, "SELECT 1 FROM account_models WHERE account_id = $1 AND model_id = $2", [
      accountId,
      modelId,
    ])) ??
    (await queryOne(
      db,
      "SELECT 1 FROM training_jobs WHERE account_id = $1 AND output_model_id = $2 AND state = ANY($3)",
      [accountId, modelId, HOLDS_OUTPUT_MODEL],
    ));
  return row !== undefined;
}

async function requireFreeOutputModel(db: Db, accountId: string, modelId: string): Promise<void> {
  if (await outputModelTaken(db, accountId, modelId)) {
    throw outputModelTakenError(modelId);
  }
}

async function insertJob(db: Db, job: JobRecord): Promise<number> {
  const row = await queryOne(
    db,
    "INSERT INTO training_jobs (account_id, job_id, job_type, state, output_model_id, record, create_time_ms) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING seq",
    [
      job.accountId,
      job.jobId,
      job.jobType,
      job.state,
      job.config.outputModelId,
      serializeRecord(job),
      job.createTime.getTime(),
    ],
  );
  const seq = Number(row?.seq);
  await linkDatasets(db, job, seq);
  return seq;
}

async function linkDatasets(db: Db, job: JobRecord, seq: number): Promise<void> {
  if (job.datasetIds.length === 0) return;
  await db.query(
    "INSERT INTO training_job_datasets (account_id, dataset_id, job_seq) SELECT $1, unnest($2::text[]), $3 ON CONFLICT DO NOTHING",
    [job.accountId, job.datasetIds, seq],
  );
}

/**
 * Applies the patch to the job, its row locked, when it is in `fromStates` and (with
 * `leaseOwner`) still held by that runner; undefined when not.
 */
async function updateLocked(
  db: Db,
  accountId: string,
  jobId: string,
  patch: JobPatch,
  fromStates?: readonly JobState[],
  leaseOwner?: string,
  bill?: JobBill,
): Promise<JobRecord | undefined> {
  const row = await queryOne(
    db,
    "SELECT seq, record, lease_owner FROM training_jobs WHERE account_id = $1 AND job_id = $2 FOR UPDATE",
    [accountId, jobId],
  );
  if (row === undefined) throw new StoreError("not-found", `No job ${jobId}.`);
  const current = parseRecord(row.record as string);
  if (fromStates && !fromStates.includes(current.state)) return undefined;
  if (leaseOwner !== undefined && row.lease_owner !== leaseOwner) return undefined;
  const { job: next, charge } = bill ? withBill({ ...current, ...patch }, bill) : { job: { ...current, ...patch } };
  await db.query("UPDATE training_jobs SET state = $1, record = $2 WHERE seq = $3", [
    next.state,
    serializeRecord(next),
    row.seq,
  ]);
  if (patch.datasetIds) await linkDatasets(db, next, Number(row.seq));
  if (charge) await recordCharge(db, charge);
  return next;
}

async function jobSeq(db: Db, accountId: string, jobId: string): Promise<number> {
  const row = await queryOne(db, "SELECT seq FROM training_jobs WHERE account_id = $1 AND job_id = $2", [
    accountId,
    jobId,
  ]);
  if (row === undefined) throw new StoreError("not-found", `No job ${jobId}.`);
  return Number(row.seq);
}
