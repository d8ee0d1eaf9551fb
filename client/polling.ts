/**
 * Waiting for a fine-tuning job or a dataset to reach a state, by polling its GET:
 * until a terminal state (or one of the states asked for), with a timeout and a
 * callback on every poll (progress bars, logs).
 */
import type { ApiClient } from "./client.ts";
import { ok } from "./errors.ts";
import { parseResourceName, type NamedCollection } from "../common/resource-names.ts";
import { sleep } from "./retry.ts";
import type { Dataset, DatasetState, JobState, JobType, TrainingJob } from "./types.ts";

export const TERMINAL_JOB_STATES: readonly JobState[] = [
  "JOB_STATE_SUCCEEDED",
  "JOB_STATE_FAILED",
  "JOB_STATE_CANCELLED",
  "JOB_STATE_EXPIRED",
];
/** States a dataset does not leave by itself. */
export const TERMINAL_DATASET_STATES: readonly DatasetState[] = [
  "DATASET_STATE_READY",
  "DATASET_STATE_FAILED",
  "DATASET_STATE_DELETED",
];

export interface WaitOptions<State, Resource> {
  /**
   * Also stop at these states (e.g. `["JOB_STATE_RUNNING"]`). Terminal states always
   * stop the wait, since nothing moves on from them: check the state you get.
   */
  until?: readonly State[];
  /** Give up after this long with a WaitTimeoutError. Default 30 minutes. */
  timeoutMs?: number;
  /** Time between polls. Default 1 s. */
  intervalMs?: number;
  /** Called with the resource after every poll. */
  onProgress?: (resource: Resource) => void;
  signal?: AbortSignal;
}

/** The wait ran out of time; `last` is what the last poll saw. */
export class WaitTimeoutError<Resource = unknown> extends Error {
  readonly last: Resource;
  constructor(message: string, last: Resource) {
    super(message);
    this.name = "WaitTimeoutError";
    this.last = last;
  }
}

/** A job, as created or read (its `name` says the account and id), or its parts. */
export type JobRef = Pick<TrainingJob, "name" | "jobType"> | { account: string; jobId: string; jobType: JobType };
/** A dataset, as created or read, or its parts. */
export type DatasetRef = Pick<Dataset, "name"> | { account: string; dataset: string };

/** Polls the job until it is in a terminal state or one of `until`; returns it. */
export function waitForJob(
  client: ApiClient,
  job: JobRef,
  options: WaitOptions<JobState, TrainingJob> = {},
): Promise<TrainingJob> {
  const { account, id } = "name" in job ? parseName(job.name, "trainingJobs") : { account: job.account, id: job.jobId };
  const params = { path: { account, job: id } };
  const get =
    job.jobType === "JOB_TYPE_DPO"
      ? () => ok(client.GET("/accounts/{account}/dpoJobs/{job}", { params, signal: options.signal }))
      : () => ok(client.GET("/accounts/{account}/supervisedFineTuningJobs/{job}", { params, signal: options.signal }));
  return poll(get, (j) => j.state, TERMINAL_JOB_STATES, options, `job ${id}`);
}

/** Polls the dataset until it is READY, FAILED or DELETED, or in one of `until`; returns it. */
export function waitForDataset(
  client: ApiClient,
  dataset: DatasetRef,
  options: WaitOptions<DatasetState, Dataset> = {},
): Promise<Dataset> {
  const { account, id } =
    "name" in dataset ? parseName(dataset.name, "datasets") : { account: dataset.account, id: dataset.dataset };
  const get = () =>
    ok(
      client.GET("/accounts/{account}/datasets/{dataset}", {
        params: { path: { account, dataset: id } },
        signal: options.signal,
      }),
    );
  return poll(get, (d) => d.state, TERMINAL_DATASET_STATES, options, `dataset ${id}`);
}

async function poll<State, Resource>(
  get: () => Promise<Resource>,
  stateOf: (resource: Resource) => State,
  terminal: readonly State[],
  options: WaitOptions<State, Resource>,
  what: string,
): Promise<Resource> {
  const deadline = Date.now() + (options.timeoutMs ?? 30 * 60_000);
  const intervalMs = options.intervalMs ?? 1_000;
  for (;;) {
    const resource = await get();
    options.onProgress?.(resource);
    const state = stateOf(resource);
    if (terminal.includes(state) || options.until?.includes(state)) return resource;
    const left = deadline - Date.now();
    if (left <= 0)
      throw new WaitTimeoutError(
        `Gave up waiting for ${what} after ${options.timeoutMs ?? 30 * 60_000} ms; it is ${String(state)}.`,
        resource,
      );
    await sleep(Math.min(intervalMs, left), options.signal);
  }
}

/** `accounts/{account}/{collection}/{id}` → its account and id; a thrown Error when it is not one. */
function parseName(name: string, collection: NamedCollection): { account: string; id: string } {
  const parts = parseResourceName(name, collection);
  if (!parts) throw new Error(`Not a ${collection} name: ${name}`);
  return parts;
}
