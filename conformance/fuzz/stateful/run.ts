/**
 * The stateful engine: fast-check's model-based testing (`fc.commands`, `fc.asyncModelRun`)
 * over whole lifecycles (dataset create → upload → validate → estimate → job create → get,
 * list, cancel, metrics → inference with the tuned model), against any server the profile
 * describes. After each command the answer is compared with a model of the document's
 * state machines, idempotency and isolation rules (commands.ts, model.ts), and checked as a
 * conformance run checks every answer (http.ts); after each run, the invariants
 * (invariants.ts). A failure is shrunk to the shortest failing sequences.
 *
 * One run: `clients` command sequences at once. With only the profile, they share its
 * primary account, each with ids of its own prefix, and probe the secondary account only
 * with reads its key may not make; what they made is removed after the run. Reference hooks
 * (model.ts `ReferenceHooks`, supplied by the reference server's own tests) add a fresh
 * account per sequence, operator changes, kill -9 and invariants over the server's store.
 */
import { randomBytes } from "node:crypto";
import fc from "fast-check";
import type { Contract } from "../../contract.ts";
import type { Profile } from "../../profile.ts";
import { curlCommand } from "../curl.ts";
import type { Finding } from "../findings.ts";
import { commandArbitraries, ModelMismatch } from "./commands.ts";
import { ServerFault, Tally } from "./http.ts";
import { checkInvariants } from "./invariants.ts";
import {
  COLLECTION,
  Gate,
  TERMINAL,
  newModel,
  request,
  wireId,
  type Model,
  type Real,
  type ReferenceHooks,
} from "./model.ts";

export interface StatefulOptions {
  profile: Profile;
  /** The kit's contract: every answer is checked against it. */
  contract?: Contract;
  hooks?: ReferenceHooks;
  /** The API base URLs requests rotate over (default: the profile's). A crash hook may change them. */
  baseUrls?: () => string[];
  runs: number;
  seed: number;
  path?: string;
  /** fast-check's replay paths of the commands of each sequence (with `path`: what makes a shrunk failure replay). */
  replayPaths?: string[];
  /** Command sequences run at once in each run. */
  clients?: number;
  /** Longest sequence per client. */
  maxCommands?: number;
  /** Whether the first client may crash a process at a random step (needs the crash hook). */
  crashes?: boolean;
  /** How long shrinking may go on after the first failure (default 5 minutes). */
  shrinkMs?: number;
  /** Stop starting runs after this long; the report says how many ran. */
  timeLimitMs?: number;
  /** What the ids of a shared account start with (default `sf-<seed>`). */
  idPrefix?: string;
  onProgress?: (report: StatefulReport) => void;
}

export interface StatefulReport {
  clients: number;
  maxCommands: number;
  seed: number;
  /** Runs finished (each: `clients` sequences at once, then the invariants). */
  runs: number;
  sequences: number;
  commands: number;
  /** Command name → times run. */
  perCommand: Map<string, number>;
  crashes: number;
  tally: Tally;
  durationMs: number;
  /** The shrunk failure, as a finding. */
  finding?: Finding;
  failure?: string;
  /** The first failure seen, before shrinking (the shrunk one may fail differently). */
  firstFailure?: string;
  path?: string;
  replayPaths?: string[];
  /** Datasets and jobs a cleanup could not remove. */
  leftBehind: string[];
  /** Models the sequences' jobs trained (the interface has no operation that deletes one). */
  modelsLeft: string[];
}

export async function fuzzStateful(options: StatefulOptions): Promise<StatefulReport> {
  const started = performance.now();
  const clients = options.clients ?? 3;
  const hooks = options.hooks ?? {};
  const report: StatefulReport = {
    clients,
    maxCommands: options.maxCommands ?? 25,
    seed: options.seed,
    runs: 0,
    sequences: 0,
    commands: 0,
    perCommand: new Map(),
    crashes: 0,
    tally: new Tally(),
    durationMs: 0,
    leftBehind: [],
    modelsLeft: [],
  };
  const { profile } = options;
  const baseUrls = options.baseUrls ?? (() => [profile.baseUrl]);
  // Unique per run, not per seed: a deleted dataset's id stays taken.
  const idPrefix = options.idPrefix ?? `sf-${options.seed.toString(36)}-${randomBytes(2).toString("hex")}`;
  const arbitraries = (crashes: boolean) =>
    commandArbitraries({
      crashes: crashes && hooks.crash !== undefined,
      admin: hooks.admin !== undefined,
      hugeUploads: hooks.maxUploadBytes !== undefined,
    });
  const sequence = (crashes: boolean, i: number) =>
    fc.commands(arbitraries(crashes), {
      maxCommands: report.maxCommands,
      size: "max",
      replayPath: options.replayPaths?.[i],
    });
  const runs = fc.tuple(
    sequence(options.crashes ?? true, 0),
    ...Array.from({ length: clients - 1 }, (_, i) => sequence(false, i + 1)),
  );
  let shrinkUntil = Infinity;
  let lastFinding: Finding | undefined;
  let runNo = 0;
  const property = fc.asyncProperty(runs, async (sequences) => {
    // Past the shrinking budget every further try is skipped, which ends shrinking at the smallest failure so far.
    fc.pre(Date.now() < shrinkUntil);
    runNo++;
    const gate = new Gate();
    const accounts = await Promise.all(
      sequences.map(async (_, i) =>
        hooks.newAccount
          ? { ...(await hooks.newAccount()), prefix: "" }
          : {
              id: profile.accounts.primary.id,
              key: profile.accounts.primary.key,
              prefix: `${idPrefix}-${runNo}-${i}-`,
            },
      ),
    );
    const reals: Real[] = accounts.map(({ id, key, prefix }) => ({
      account: id,
      key,
      baseUrls,
      hooks,
      ...(options.contract ? { contract: options.contract } : {}),
      prefix,
      baseModel: `accounts/maas/models/${profile.models.trainableBase ?? profile.models.chat}`,
      chatModel: profile.models.chat,
      jobMs: profile.timeouts.jobMs,
      pollMs: profile.timeouts.pollMs,
      rule: "finetune.create",
      tally: report.tally,
      gate,
      // Isolation probes: the other sequences' accounts (when they have their own) and the profile's secondary.
      others: [...new Set([...accounts.filter((a) => a.id !== id).map((a) => a.id), profile.accounts.secondary.id])],
      trace: [],
      turn: 0,
    }));
    const models: Model[] = sequences.map(() => newModel(Date.now()));
    let failing: Real | undefined;
    try {
      // Settled, not all: a failing sequence must not leave the others running into the next run.
      const outcomes = await Promise.allSettled(
        sequences.map((commands, i) =>
          fc.asyncModelRun(() => ({ model: models[i] as Model, real: reals[i] as Real }), commands),
        ),
      );
      const rejected = outcomes.findIndex((o) => o.status === "rejected");
      if (rejected >= 0) {
        failing = reals[rejected];
        throw (outcomes[rejected] as PromiseRejectedResult).reason;
      }
      for (const [i, real] of reals.entries()) {
        failing = real;
        await checkInvariants(models[i] as Model, real);
      }
    } catch (error) {
      const traces = reals.map(
        (r) => `${r.account}${r.prefix ? ` (${r.prefix}…)` : ""}:\n    ${r.trace.join("\n    ") || "(nothing)"}`,
      );
      if (report.firstFailure === undefined) {
        report.firstFailure = (error as Error).message;
        shrinkUntil = Date.now() + (options.shrinkMs ?? 300_000);
      }
      lastFinding = toFinding(error as Error, failing, traces, profile);
      const failure = new Error(
        `${(error as Error).name}: ${(error as Error).message}\nwhat each client did, in its order:\n  ${traces.join("\n  ")}`,
        { cause: error },
      );
      failure.stack = failure.message;
      throw failure;
    } finally {
      if (!hooks.newAccount)
        for (const [i, real] of reals.entries()) {
          const left = await cleanUp(models[i] as Model, real);
          report.leftBehind.push(...left.records);
          report.modelsLeft.push(...left.models);
        }
    }
    report.runs++;
    report.sequences += sequences.length;
    for (const commands of sequences)
      for (const command of commands) {
        report.commands++;
        const name = command.toString().replace(/\(.*$/, "").replace(/ .*$/, "");
        report.perCommand.set(name, (report.perCommand.get(name) ?? 0) + 1);
        if (name === "kill") report.crashes++;
      }
    options.onProgress?.(report);
  });
  try {
    await fc.assert(property, {
      seed: options.seed,
      numRuns: options.runs,
      path: options.path,
      verbose: 0,
      includeErrorInReport: true,
      ...(options.timeLimitMs ? { interruptAfterTimeLimit: options.timeLimitMs, markInterruptAsFailure: false } : {}),
    });
  } catch (error) {
    report.failure = (error as Error).message;
    report.path = /path: "([^"]*)"/.exec(report.failure)?.[1];
    report.replayPaths = [
      ...(/Counterexample: (.*)/.exec(report.failure)?.[1] ?? "").matchAll(/replayPath="([^"]*)"/g),
    ].map((m) => m[1] as string);
    if (lastFinding) {
      lastFinding.replay = `seed ${options.seed}, clients ${clients}, max commands ${report.maxCommands}${report.path ? `, path ${report.path}` : ""}${report.replayPaths.length ? `, replay paths ${report.replayPaths.join(",")}` : ""}`;
      report.finding = lastFinding;
    }
  } finally {
    report.durationMs = performance.now() - started;
  }
  return report;
}

function toFinding(error: Error, failing: Real | undefined, traces: string[], profile: Profile): Finding {
  const rule =
    error instanceof ModelMismatch || error instanceof ServerFault ? error.rule : (failing?.rule ?? "finetune.create");
  const last = failing?.last;
  const body = last?.spec.json !== undefined ? JSON.stringify(last.spec.json) : (last?.spec.raw?.data ?? "");
  const contentType = last?.spec.json !== undefined ? "application/json" : last?.spec.raw?.contentType;
  const url = last ? new URL(last.url) : new URL(profile.baseUrl);
  return {
    engine: "stateful",
    rule,
    operationId: last ? `${last.method} ${last.spec.label}` : "(before any request)",
    message: error.message,
    method: last?.method ?? "",
    url: last?.url ?? "",
    request: last ? `${last.method} ${last.url}${body ? ` ${body.slice(0, 500)}` : ""}` : "(none)",
    curl: last
      ? curlCommand({
          method: last.method,
          origin: url.origin,
          target: `${url.pathname}${url.search}`,
          headers: [
            ["Authorization", `Bearer ${last.key}`],
            ...(contentType ? ([["Content-Type", contentType]] as [string, string][]) : []),
            ...Object.entries(last.spec.headers ?? {}),
          ],
          body: Buffer.from(body),
          caveat: "the last request of the failing sequence; the ones before it (below) set the state it needs",
        })
      : "",
    sequence: traces,
  };
}

/**
 * Cancels the sequence's live jobs and deletes its datasets (a shared account keeps only what
 * others made); returns what stayed and the models its jobs trained, read from each job after
 * the cancel, since a job may succeed between the sequence's last look and the cleanup.
 */
async function cleanUp(m: Model, r: Real): Promise<{ records: string[]; models: string[] }> {
  const records: string[] = [];
  const models: string[] = [];
  for (const job of m.jobs.values()) {
    const path = `/accounts/${r.account}/${COLLECTION[job.type]}/${job.jobId}`;
    if (!TERMINAL.has(job.seen.at(-1) ?? ""))
      await request(r, { method: "POST", path: `${path}:cancel`, label: "cleanup" }).catch(() => undefined);
    const answer = await request(r, { method: "GET", path, label: "cleanup" }).catch(() => undefined);
    const outputModel = (answer?.body as { outputModel?: unknown } | undefined)?.outputModel;
    if (answer?.status === 200 && typeof outputModel === "string") models.push(outputModel);
  }
  for (const [id, d] of m.datasets) {
    if (d.deleted) continue;
    const answer = await request(r, {
      method: "DELETE",
      path: `/accounts/${r.account}/datasets/${wireId(r, id)}`,
      label: "cleanup",
    }).catch(() => undefined);
    if (answer && answer.status !== 200 && answer.status !== 404)
      records.push(`dataset ${wireId(r, id)} (${answer.status})`);
  }
  return { records, models };
}

export function formatStateful(report: StatefulReport): string {
  const out: string[] = [];
  out.push(
    `stateful, seed ${report.seed}: ${report.runs} runs, ${report.sequences} command sequences, ${report.commands} commands (${report.crashes} kill -9), ${report.tally.total} requests in ${(report.durationMs / 1000).toFixed(1)} s`,
  );
  out.push(
    `  commands: ${[...report.perCommand]
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ×${v}`)
      .join(", ")}`,
  );
  const width = Math.max(0, ...[...report.tally.calls.keys()].map((k) => k.length));
  for (const [label, byStatus] of [...report.tally.calls].sort(([a], [b]) => a.localeCompare(b))) {
    const statuses = [...byStatus]
      .sort(([a], [b]) => a - b)
      .map(([s, n]) => `${s}×${n}`)
      .join(" ");
    out.push(`  ${label.padEnd(width)}  ${statuses}`);
  }
  if (report.leftBehind.length) out.push(`  could not remove: ${report.leftBehind.join(", ")}`);
  if (report.modelsLeft.length)
    out.push(
      `  left ${report.modelsLeft.length} trained model(s) (no delete in the interface): ${report.modelsLeft.join(", ")}`,
    );
  return out.join("\n");
}
