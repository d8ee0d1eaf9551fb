/**
 * What the stateful fuzzer believes one account holds: its datasets and their acknowledged
 * versions, its jobs as last seen, its idempotency keys, what inference has cost it, and
 * the admin changes made to it. Commands (commands.ts) compare every answer with it and
 * update it from what the answer proves.
 *
 * Where the server may lawfully be ahead of what the fuzzer has seen (validation running in
 * the background, a job training, an admin change within the staleness bound that caches of
 * keys and accounts are allowed), the model holds the set of answers still possible.
 */
import type { Contract } from "../../contract.ts";
import { send, ServerFault, type Answer, type RequestSpec, type Tally } from "./http.ts";

/**
 * How long after an admin change (suspend, balance, limits, a revoked key) a server may still
 * act on the old value: caches of keys and accounts are allowed a bounded staleness (issue 20
 * states it as at most one second).
 */
export const STALE_MS = 1_500;

export type Content = "sft" | "dpo" | "invalid" | "megarow";
/** Rows in each upload's valid part; the megabyte row comes on top of them. */
export const ROWS = 4;

export type Validation = "none" | "pending" | "DATASET_VERSION_STATE_READY" | "DATASET_VERSION_STATE_FAILED";

export interface VersionModel {
  no: number;
  content: Content;
  validation: Validation;
}

export interface DatasetModel {
  deleted: boolean;
  /** Acknowledged uploads (answered 200), oldest first. */
  versions: VersionModel[];
}

export type JobType = "sft" | "dpo";
export const COLLECTION: Record<JobType, string> = { sft: "supervisedFineTuningJobs", dpo: "dpoJobs" };
export const TERMINAL = new Set([
  "JOB_STATE_SUCCEEDED",
  "JOB_STATE_FAILED",
  "JOB_STATE_CANCELLED",
  "JOB_STATE_EXPIRED",
]);

export interface JobModel {
  jobId: string;
  type: JobType;
  outputModelId: string;
  /** Every distinct state seen, in order. */
  seen: string[];
  /**
   * A cancel was refused as JOB_STATE_INVALID: the job was no longer QUEUED or RUNNING then
   * (CHECKPOINTING, FINALIZING or ended; only QUEUED and RUNNING jobs can be cancelled), so
   * it is never QUEUED again.
   */
  cancelRefused: boolean;
  processedTokens: number;
}

/** A value the admin changed, with what it was before, so that answers within STALE_MS may show either. */
export interface Setting<T> {
  value: T;
  previous: T;
  changedAt: number;
}

export interface Model {
  datasets: Map<string, DatasetModel>;
  jobs: Map<string, JobModel>;
  /** `${type} ${key}` → the body's fingerprint and the job it created. */
  idempotency: Map<string, { body: string; jobId: string }>;
  /** The tokens (input plus output) of each inference answer's usage: what a reference hook prices. */
  inferenceTokens: number[];
  suspended: Setting<boolean>;
  balanceZero: Setting<boolean>;
  budgetZero: Setting<boolean>;
  /** Every absolute balance the admin set: the value, and the times just before and after. */
  balanceSets: { micros: number; before: number; after: number }[];
  revokedKeys: { key: string; at: number }[];
}

/**
 * Optional plugins for what a black-box client cannot do: the reference server's tests and
 * scripts supply them (harness/fuzz/stateful/reference-hooks.ts); the kit runs without any.
 */
export interface ReferenceHooks {
  /** A fresh account of its own for each sequence (else all share the profile's primary account, ids prefixed). */
  newAccount?(): Promise<{ id: string; key: string }>;
  /** Operator changes to an account, as the admin command makes them: they enable the admin commands. */
  admin?: {
    suspend(account: string, on: boolean): Promise<void>;
    /** Sets the balance (micro-units). */
    setBalance(account: string, micros: number): Promise<void>;
    /** A budget of zero (`true`) or none. */
    setBudgetZero(account: string, zero: boolean): Promise<void>;
    /** Revokes every key of the account and makes a new one, returned. */
    replaceKey(account: string): Promise<string>;
    /** Unsuspended and without a budget again, before the invariants read the account. */
    restore(account: string): Promise<void>;
  };
  /** kill -9 of a process and its restart (`which` picks among them); resolves once it serves again. */
  crash?(which: number): Promise<string>;
  /** Invariants after each run that need the server's internals (its store's tables, its money). */
  invariants?(m: Model, r: Real): Promise<void>;
  /** For a request that got no answer: whether the process was alive and whether the request reached it. */
  diagnose?(baseUrl: string, path: string): Promise<string>;
  /** Uploads above this are 413 MEDIA_TOO_LARGE (enables the "huge" upload). */
  maxUploadBytes?: number;
}

/** What a command acts through: its account, the server(s), and the shared pieces of the run. */
export interface Real {
  account: string;
  key: string;
  /** The API base URLs: requests rotate over them (a crash hook may change them). */
  baseUrls(): string[];
  hooks: ReferenceHooks;
  /** The kit's contract: every answer is checked against it. */
  contract?: Contract;
  /** What this sequence's ids start with (empty on a fresh account of its own). */
  prefix: string;
  /** A trainable base model's full name, and the chat model inference calls. */
  baseModel: string;
  chatModel: string;
  /** Longest wait for a job to end, and for a validation. */
  jobMs: number;
  pollMs: number;
  /** The rule the command under way checks (a finding without a rule of its own is reported under it). */
  rule: string;
  /** The last request sent, for a finding's curl reproduction. */
  last?: { method: string; url: string; key: string; spec: Omit<RequestSpec, "url" | "key"> };
  tally: Tally;
  gate: Gate;
  /** The accounts of the other clients of this run (and a seed account): for isolation probes. */
  others: string[];
  /** The commands run so far, with their answers, for a failure report. */
  trace: string[];
  /** Which server the next request goes to: requests rotate over them. */
  turn: number;
}

export const INITIAL_BALANCE_MICROS = 1_000_000_000;

export function newModel(now: number): Model {
  const off = <T>(value: T): Setting<T> => ({ value, previous: value, changedAt: 0 });
  return {
    datasets: new Map(),
    jobs: new Map(),
    idempotency: new Map(),
    inferenceTokens: [],
    suspended: off(false),
    balanceZero: off(false),
    budgetZero: off(false),
    balanceSets: [{ micros: INITIAL_BALANCE_MICROS, before: now, after: now }],
    revokedKeys: [],
  };
}

/** The values a setting may show now: the new one, and the old one within STALE_MS of the change. */
export function possible<T>(setting: Setting<T>, now = Date.now()): T[] {
  return now - setting.changedAt < STALE_MS && setting.previous !== setting.value
    ? [setting.value, setting.previous]
    : [setting.value];
}

export function change<T>(setting: Setting<T>, value: T): void {
  setting.previous = setting.value;
  setting.value = value;
  setting.changedAt = Date.now();
}

/**
 * The refusals the account's state allows before any handler runs (auth.ts: suspended, then
 * for paid operations the balance, then the budget), and "PASS" when the call may reach its handler.
 */
export function gateOutcomes(m: Model, paid: boolean): Set<string> {
  const outcomes = new Set<string>();
  for (const suspended of possible(m.suspended))
    for (const zero of possible(m.balanceZero))
      for (const budget of possible(m.budgetZero)) {
        if (suspended) outcomes.add("TENANT_SUSPENDED");
        else if (paid && zero) outcomes.add("INSUFFICIENT_BALANCE");
        else if (paid && budget) outcomes.add("TENANT_BUDGET_EXCEEDED");
        else outcomes.add("PASS");
      }
  return outcomes;
}

export const EXPECTED_OUTCOME: Record<Content, Validation> = {
  sft: "DATASET_VERSION_STATE_READY",
  dpo: "DATASET_VERSION_STATE_READY",
  megarow: "DATASET_VERSION_STATE_READY",
  invalid: "DATASET_VERSION_STATE_FAILED",
};

/** The version states a GET may show for a version of the model. */
export function versionStates(v: VersionModel): string[] {
  if (v.validation === "none") return ["DATASET_VERSION_STATE_UPLOADING"];
  if (v.validation === "pending") return ["DATASET_VERSION_STATE_VALIDATING", EXPECTED_OUTCOME[v.content]];
  return [v.validation];
}

/** The dataset states a GET may show: DELETED, CREATING with no version, else its newest version's. */
export function datasetStates(d: DatasetModel): string[] {
  if (d.deleted) return ["DATASET_STATE_DELETED"];
  const latest = d.versions.at(-1);
  if (latest === undefined) return ["DATASET_STATE_CREATING"];
  return versionStates(latest).map((s) => s.replace("DATASET_VERSION_STATE_", "DATASET_STATE_"));
}

/** Records what an answer showed about a version whose validation was pending. */
export function learnVersionState(v: VersionModel, state: string): void {
  if (v.validation === "pending" && state !== "DATASET_VERSION_STATE_VALIDATING") v.validation = state as Validation;
}

/**
 * Whether a job may be used to train the job type, as far as the model knows:
 * "yes", "no" with the error code, or "maybe" while validation may still be running.
 */
export function trainable(
  m: Model,
  datasetId: string,
  type: JobType,
): { verdict: "yes" } | { verdict: "no"; code: string } | { verdict: "maybe"; code: string } {
  const d = m.datasets.get(datasetId);
  // A deleted dataset is as good as none for training (server/datasets/training-data.ts).
  if (d === undefined || d.deleted) return { verdict: "no", code: "NOT_FOUND" };
  const latest = d.versions.at(-1);
  if (latest === undefined) return { verdict: "no", code: "INVALID_REQUEST" };
  const format: JobType | undefined =
    latest.content === "dpo" ? "dpo" : latest.content === "invalid" ? undefined : "sft";
  const fits = format === type;
  if (latest.validation === "DATASET_VERSION_STATE_READY")
    return fits ? { verdict: "yes" } : { verdict: "no", code: "INVALID_REQUEST" };
  if (latest.validation === "pending" && EXPECTED_OUTCOME[latest.content] === "DATASET_VERSION_STATE_READY")
    return fits ? { verdict: "maybe", code: "INVALID_REQUEST" } : { verdict: "no", code: "INVALID_REQUEST" };
  return { verdict: "no", code: "INVALID_REQUEST" };
}

/** Rows in a version's file, as the estimate counts them (trained and skipped). */
export function rowCount(content: Content): number {
  return content === "megarow" ? ROWS + 1 : ROWS;
}

/** Whether a live or succeeded job of the account holds the output model id ("maybe": it may have failed unseen). */
export function outputModelTaken(m: Model, outputModelId: string): boolean {
  for (const job of m.jobs.values()) {
    const last = job.seen.at(-1) ?? "";
    if (
      job.outputModelId === outputModelId &&
      !["JOB_STATE_CANCELLED", "JOB_STATE_FAILED", "JOB_STATE_EXPIRED"].includes(last)
    )
      return true;
  }
  return false;
}

/** A job's state order: a state may only be followed by one of the same or a later rank (RUNNING and CHECKPOINTING alternate). */
export function rank(state: string): number {
  if (state === "JOB_STATE_QUEUED") return 0;
  if (state === "JOB_STATE_RUNNING" || state === "JOB_STATE_CHECKPOINTING") return 1;
  if (state === "JOB_STATE_FINALIZING") return 2;
  if (TERMINAL.has(state)) return 3;
  return -1;
}

/** Checks a newly seen job state against the ones seen before; returns the problem, if any. */
export function transitionProblem(job: JobModel, state: string): string | undefined {
  const last = job.seen.at(-1);
  if (rank(state) < 0) return `unknown state ${state}`;
  if (job.cancelRefused && state === "JOB_STATE_QUEUED")
    return `${state} after a cancel was refused (a queued job can be cancelled)`;
  if (last === undefined || last === state) return undefined;
  if (TERMINAL.has(last)) return `${last} → ${state}: a finished job changed state`;
  if (rank(state) < rank(last)) return `${last} → ${state}: backwards`;
  return undefined;
}

/** A pool name (`d1`, `m2`, `k1`) as this sequence's id on the wire. */
export function wireId(r: Real, name: string): string {
  return `${r.prefix}${name}`;
}

/** A request from this account's client through the gate, to the next server in turn. */
export async function request(
  r: Real,
  spec: Omit<RequestSpec, "url" | "key"> & { path: string; key?: string; server?: number },
): Promise<Answer> {
  await r.gate.enter();
  try {
    // Read after the gate: a crash in between restarts a server on another port.
    const urls = r.baseUrls();
    const base = urls[(spec.server ?? r.turn++) % urls.length] as string;
    const key = spec.key ?? r.key;
    r.last = { method: spec.method, url: `${base}${spec.path}`, key, spec };
    try {
      const check = r.contract ? { contract: r.contract, apiPath: spec.path } : undefined;
      return await send(r.tally, { ...spec, url: `${base}${spec.path}`, key }, check);
    } catch (error) {
      // No answer at all: say whether the process was alive and whether the request reached it.
      if (error instanceof ServerFault && error.noAnswer && r.hooks.diagnose)
        error.message += `\n    ${await r.hooks.diagnose(base, spec.path)}`;
      throw error;
    }
  } finally {
    r.gate.leave();
  }
}

/**
 * Requests share the processes; a crash (commands.ts) takes them alone: it waits until no
 * request is in flight and holds new ones until the killed process serves again, so that
 * every answer a client got was given by a process that then may be killed.
 */
export class Gate {
  #active = 0;
  #crash: Promise<void> | undefined;
  #idle: (() => void)[] = [];

  async enter(): Promise<void> {
    while (this.#crash) await this.#crash;
    this.#active++;
  }

  leave(): void {
    this.#active--;
    if (this.#active === 0) for (const resolve of this.#idle.splice(0)) resolve();
  }

  async alone(work: () => Promise<void>): Promise<void> {
    while (this.#crash) await this.#crash;
    let done = () => {};
    this.#crash = new Promise<void>((resolve) => (done = resolve));
    try {
      while (this.#active > 0) await new Promise<void>((resolve) => this.#idle.push(resolve));
      await work();
    } finally {
      this.#crash = undefined;
      done();
    }
  }
}
