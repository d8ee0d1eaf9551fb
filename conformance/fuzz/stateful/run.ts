/**
 * The stateful fuzzer: fast-check's model-based testing (`fc.commands`, `fc.asyncModelRun`)
 * over whole lifecycles, against real processes (deployment.ts) on SQLite or PostgreSQL.
 *
 * One run: `clients` command sequences, each on a fresh account of its own (made with the
 * admin module), run at once against the servers (requests rotate over them; on PostgreSQL
 * two servers and a worker). After each command the answer is compared with the model
 * (commands.ts); after the run, the invariants (invariants.ts). The first client's sequence
 * may also kill -9 a process at a random step. A failure is shrunk to the shortest failing
 * sequences and reported with the seed and path that replay it
 * (`npm run fuzz:stateful -- --store S --seed N --path P`).
 */
import fc from "fast-check";
import { commandArbitraries } from "./commands.ts";
import { startDeployment, type Deployment, type StoreKind } from "./deployment.ts";
import { Tally } from "./http.ts";
import { checkInvariants } from "./invariants.ts";
import { Gate, INITIAL_BALANCE_MICROS, newModel, type Model, type Real } from "./model.ts";
import { COMMANDS } from "../../../server/admin/commands.ts";
import { formatMoney } from "../../../server/store/money.ts";

export interface StatefulOptions {
  store: StoreKind;
  runs: number;
  seed: number;
  path?: string;
  /**
   * fast-check's replay paths of the commands of each sequence (the `replayPath` comments of a
   * counterexample, in order): with `path`, what makes a shrunk failure replay.
   */
  replayPaths?: string[];
  /** Command sequences run at once in each run, each on its own account. */
  clients?: number;
  /** Longest sequence per client. */
  maxCommands?: number;
  /** Whether the first client may kill -9 a process at a random step. */
  crashes?: boolean;
  /**
   * How long shrinking may go on after the first failure (each try is a whole run against
   * the real processes); then the smallest failing case so far is reported. Default 5 minutes.
   */
  shrinkMs?: number;
  /** Stop starting runs after this long (a time-boxed long run); the report says how many ran. */
  timeLimitMs?: number;
  onProgress?: (report: StatefulReport) => void;
}

export interface StatefulReport {
  store: StoreKind;
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
  failure?: string;
  /** The first failure seen, before shrinking (the shrunk one may fail differently). */
  firstFailure?: string;
  /** fast-check's replay path of the failure, and the replay paths of its command sequences. */
  path?: string;
  replayPaths?: string[];
  /** What the processes logged as failures during the whole session. */
  processLog: string[];
}

let accountSerial = 0;

export async function fuzzStateful(options: StatefulOptions): Promise<StatefulReport> {
  const started = performance.now();
  const clients = options.clients ?? 3;
  const report: StatefulReport = {
    store: options.store,
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
    processLog: [],
  };
  const deployment = await startDeployment(options.store);
  try {
    const sequence = (crashes: boolean, i: number) =>
      fc.commands(commandArbitraries({ crashes }), {
        maxCommands: options.maxCommands ?? 25,
        size: "max",
        replayPath: options.replayPaths?.[i],
      });
    const runs = fc.tuple(
      sequence(options.crashes ?? true, 0),
      ...Array.from({ length: clients - 1 }, (_, i) => sequence(false, i + 1)),
    );
    let shrinkUntil = Infinity;
    const property = fc.asyncProperty(runs, async (sequences) => {
      // Past the shrinking budget every further try is skipped, which ends shrinking at the smallest failure so far.
      fc.pre(Date.now() < shrinkUntil);
      const gate = new Gate();
      const accounts = await Promise.all(sequences.map(() => newAccount(deployment)));
      const reals: Real[] = accounts.map(({ id, key }) => ({
        account: id,
        key,
        deployment,
        tally: report.tally,
        gate,
        others: [...accounts.filter((a) => a.id !== id).map((a) => a.id), "acme"],
        trace: [],
        turn: 0,
      }));
      const models: Model[] = [];
      try {
        // Settled, not all: a failing sequence must not leave the others running into the next run.
        const outcomes = await Promise.allSettled(
          sequences.map(async (commands, i) => {
            const real = reals[i] as Real;
            const model = newModel(Date.now());
            models[i] = model;
            await fc.asyncModelRun(() => ({ model, real }), commands);
          }),
        );
        for (const outcome of outcomes) if (outcome.status === "rejected") throw outcome.reason;
        for (const [i, real] of reals.entries()) await checkInvariants(models[i] as Model, real);
      } catch (error) {
        const traces = reals.map((r) => `  ${r.account}:\n    ${r.trace.join("\n    ") || "(nothing)"}`).join("\n");
        if (report.firstFailure === undefined) {
          report.firstFailure = (error as Error).message;
          shrinkUntil = Date.now() + (options.shrinkMs ?? 300_000);
        }
        const failure = new Error(
          `${(error as Error).name}: ${(error as Error).message}\nwhat each client did, in its order:\n${traces}`,
        );
        failure.stack = failure.message;
        throw failure;
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
        ...(options.timeLimitMs ? { interruptAfterTimeLimit: options.timeLimitMs } : {}),
      });
    } catch (error) {
      report.failure = (error as Error).message;
      report.path = /path: "([^"]*)"/.exec(report.failure)?.[1];
      report.replayPaths = [
        ...(/Counterexample: (.*)/.exec(report.failure)?.[1] ?? "").matchAll(/replayPath="([^"]*)"/g),
      ].map((m) => m[1] as string);
    }
  } finally {
    report.processLog = deployment.failureLog().slice(0, 30);
    await deployment.close();
    report.durationMs = performance.now() - started;
  }
  return report;
}

/** A fresh account with money, a payment method and no rate limit, and its key: made with the admin commands. */
async function newAccount(deployment: Deployment): Promise<{ id: string; key: string }> {
  const id = `sf-${process.pid}-${++accountSerial}`;
  const store = deployment.store;
  await COMMANDS["accounts create"]!.run(store, {
    positionals: [id],
    options: { balance: formatMoney(INITIAL_BALANCE_MICROS), "payment-method": true },
  });
  await COMMANDS["limits set"]!.run(store, { positionals: [id], options: { rpm: "none" } });
  const printed = await COMMANDS["keys create"]!.run(store, { positionals: [], options: { account: id } });
  return { id, key: printed.trim().split("\n").at(-1) as string };
}

/** The replay command of a report's failure. */
export function replayCommand(report: StatefulReport): string {
  const sequences =
    report.replayPaths && report.replayPaths.length > 0 ? ` --replay-paths '${report.replayPaths.join(",")}'` : "";
  return `npm run fuzz:stateful -- --store ${report.store} --seed ${report.seed} --clients ${report.clients} --max-commands ${report.maxCommands} --path ${report.path ?? "<path>"}${sequences}`;
}

export function formatReport(report: StatefulReport): string {
  const out: string[] = [];
  out.push(
    `${report.store}, seed ${report.seed}: ${report.runs} runs, ${report.sequences} command sequences, ${report.commands} commands (${report.crashes} kill -9), ${report.tally.total} requests in ${(report.durationMs / 1000).toFixed(1)} s`,
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
  out.push(
    `  processes logged: ${report.processLog.length === 0 ? "no failure" : `\n    ${report.processLog.join("\n    ")}`}`,
  );
  return out.join("\n");
}
