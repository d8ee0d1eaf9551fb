/**
 * The two job collections, supervised (`supervisedFineTuningJobs`) and preference
 * (`dpoJobs`), behind one interface: the only place the CLI chooses between them. The
 * contract gives each its own typed paths, so each operation is written out once per type.
 */
import {
  accountOfName,
  ok,
  paginate,
  type ApiClient,
  type JobType,
  type Schema,
  type TrainingJob,
  type TrainingJobRequest,
} from "../client/index.ts";

export type CostEstimate = Schema<"CostEstimate">;
export type Curve = Schema<"TrainingCurve">;

/** Where a job lives: its account and id. */
export interface JobAt {
  account: string;
  job: string;
}

export interface JobCollection {
  /** "SFT" or "DPO", as people say it. */
  label: string;
  estimate(client: ApiClient, account: string, body: TrainingJobRequest): Promise<CostEstimate>;
  create(
    client: ApiClient,
    account: string,
    body: TrainingJobRequest,
    idempotencyKey: string | undefined,
  ): Promise<TrainingJob>;
  /** Every job of the account (in the state `filter` says, when given), page by page. */
  list(client: ApiClient, account: string, filter: string | undefined): AsyncIterable<TrainingJob>;
  get(client: ApiClient, at: JobAt, signal?: AbortSignal): Promise<TrainingJob>;
  cancel(client: ApiClient, at: JobAt): Promise<TrainingJob>;
  metrics(client: ApiClient, at: JobAt, maxPoints: number, signal?: AbortSignal): Promise<Curve>;
}

function listParams(account: string, filter: string | undefined) {
  return { path: { account }, query: { pageSize: 200, ...(filter ? { filter } : {}) } };
}

function createParams(account: string, idempotencyKey: string | undefined) {
  return { path: { account }, ...(idempotencyKey ? { header: { "Idempotency-Key": idempotencyKey } } : {}) };
}

const SFT: JobCollection = {
  label: "SFT",
  estimate: (client, account, body) =>
    ok(
      client.POST("/accounts/{account}/supervisedFineTuningJobs:estimateCost", { params: { path: { account } }, body }),
    ),
  create: (client, account, body, key) =>
    ok(client.POST("/accounts/{account}/supervisedFineTuningJobs", { params: createParams(account, key), body })),
  list: (client, account, filter) =>
    paginate(client, "/accounts/{account}/supervisedFineTuningJobs", { params: listParams(account, filter) }),
  get: (client, path, signal) =>
    ok(client.GET("/accounts/{account}/supervisedFineTuningJobs/{job}", { params: { path }, signal })),
  cancel: (client, path) =>
    ok(client.POST("/accounts/{account}/supervisedFineTuningJobs/{job}:cancel", { params: { path } })),
  metrics: (client, path, maxPoints, signal) =>
    ok(
      client.GET("/accounts/{account}/supervisedFineTuningJobs/{job}/metrics", {
        params: { path, query: { maxPoints } },
        signal,
      }),
    ),
};

const DPO: JobCollection = {
  label: "DPO",
  estimate: (client, account, body) =>
    ok(client.POST("/accounts/{account}/dpoJobs:estimateCost", { params: { path: { account } }, body })),
  create: (client, account, body, key) =>
    ok(client.POST("/accounts/{account}/dpoJobs", { params: createParams(account, key), body })),
  list: (client, account, filter) =>
    paginate(client, "/accounts/{account}/dpoJobs", { params: listParams(account, filter) }),
  get: (client, path, signal) => ok(client.GET("/accounts/{account}/dpoJobs/{job}", { params: { path }, signal })),
  cancel: (client, path) => ok(client.POST("/accounts/{account}/dpoJobs/{job}:cancel", { params: { path } })),
  metrics: (client, path, maxPoints, signal) =>
    ok(client.GET("/accounts/{account}/dpoJobs/{job}/metrics", { params: { path, query: { maxPoints } }, signal })),
};

const COLLECTIONS: Record<JobType, JobCollection> = { JOB_TYPE_SFT: SFT, JOB_TYPE_DPO: DPO };

/** The collection jobs of this type live in. */
export function jobCollection(type: JobType): JobCollection {
  return COLLECTIONS[type];
}

/** The other job type (a job id that is not found as one type may be of the other). */
export function otherJobType(type: JobType): JobType {
  return type === "JOB_TYPE_SFT" ? "JOB_TYPE_DPO" : "JOB_TYPE_SFT";
}

/** A job's account (from its resource name) and id. */
export function jobAt(job: Pick<TrainingJob, "name" | "jobId">): JobAt {
  const account = accountOfName(job.name);
  if (account === undefined) throw new Error(`not a resource name: ${job.name}`);
  return { account, job: job.jobId };
}
