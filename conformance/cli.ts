#!/usr/bin/env node
/**
 * conformance — run the golden transcripts against an implementation of the interface.
 *
 *   conformance [run] --base-url <url> --profile <file> [--area a]… [--transcript t]…
 *               [--junit file] [--json-report file] [--concurrency n] [--verbose] [--bail]
 *               [--timeout-minutes n]
 *   conformance init [--base-url <url>] [--account id] [--secondary-account id] [--out file]
 *                                                              write a starter profile (reports/)
 *   conformance fuzz --base-url <url> --profile <file> [--seed n] [--requests n] [--sequences n] [--minutes t]
 *                                                              fuzz the implementation with the contract as the oracle
 *   conformance record [--base-url <url>] [--profile <file>]   rewrite the goldens from the reference server
 *   conformance mock [--profile <file>] [--port n]             serve the transcripts to a client under test
 *   conformance coverage                                       which transcripts cover what (static)
 *   conformance list                                           the transcripts, by area
 *
 * Exit codes (exit.ts, the same as the toolkit CLI's `conformance run`): 0 nothing failed
 * (skipped and not-implemented transcripts do not fail a run), 8 something failed, 2 a bad
 * profile, selection or argument (nothing ran), 1 the kit broke, 130 interrupted (Ctrl-C;
 * what the run made was cleaned up).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { CapabilityError } from "./capabilities.ts";
import { FUZZ_USAGE, fuzzCommand, FuzzUsageError } from "./fuzz/command.ts";
import { Contract } from "./contract.ts";
import { EXIT } from "./exit.ts";
import { initProfile, InitError } from "./init.ts";
import { loadRules, staticCoverage } from "./coverage.ts";
import { GoldenWriter } from "./golden.ts";
import { startMockServer } from "./mock-server.ts";
import { loadProfile, ProfileError, type Profile } from "./profile.ts";
import { cleanupLines, jsonReport, junitReport, textReport, timeLimitLines } from "./report.ts";
import { htmlReport } from "./report-html.ts";
import { runConformance, SelectionError, type RunReport } from "./runner.ts";
import { kitRoot, loadTranscripts, TranscriptError } from "./transcript.ts";

/** The whole run's time limit unless --timeout-minutes says otherwise: a run of the reference server takes under a minute. */
const DEFAULT_TIMEOUT_MINUTES = 30;
/** Where the profile `init` writes and the reports of `run` go unless a path is given. */
const REPORTS = "reports";

const USAGE = `Usage:
  conformance [run] --base-url <url> --profile <file> [options]
  conformance init [--base-url <url>] [--account <id>] [--secondary-account <id>] [--trainable-base <model>] [--out <file>] [--force]
  conformance fuzz --base-url <url> --profile <file> [options of fuzz]
  conformance record [--base-url <url>] [--profile <file>]
  conformance mock [--profile <file>] [--port <n>] [--host <h>]
  conformance coverage
  conformance list

Options of run:
  --base-url <url>      the implementation's {base_url}, e.g. https://api.example.com/v1 (overrides the profile)
  --origin <url>        its {origin} (default: the base URL without /v1)
  --profile <file>      the profile: keys, models, capabilities (default: profiles/reference.json)
  --area <name>         only this area (repeatable): ${"responses, inference, auth, errors, datasets, finetune, …"}
  --transcript <id>     only this transcript, e.g. responses/stream-events (repeatable)
  --junit <file>        the JUnit XML report (default reports/conformance.xml)
  --json-report <file>  the report as JSON (default reports/conformance.json; --json <file> is the same)
  --html <file>         also the report as one self-contained HTML page
  --timeout-minutes <n> stop the whole run after n minutes (default ${DEFAULT_TIMEOUT_MINUTES}): what was in flight fails
                        under kit.time-limit and is named with its step and request, the rest is skipped,
                        the cleanup runs and the reports are written
  --concurrency <n>     transcripts at once (default: the profile's, 4)
  --bail                stop after the first failing transcript
  --verbose             list passing transcripts too
  --no-color            plain text

${FUZZ_USAGE}

record re-runs every transcript against the reference server (started in-process from
this repository when --base-url is not given) and rewrites goldens/ for each transcript
that passed, so a behaviour change shows as a diff in review.

init asks the base URL (and the primary account and a key to probe with, unless given),
probes GET /models and one harmless request per capability, and writes a starter profile
(default reports/conformance-profile.json) with every capability that answered in implements,
models.chat and, with fine-tuning, models.trainableBase, the second account (--secondary-account,
CONFORMANCE_SECONDARY_ACCOUNT, or asked) and env: references for keys. reports/ holds a
.gitignore of its own, so neither the profile nor the reports end up in a commit.

Exit codes: 0 nothing failed, 8 some transcript failed, 2 bad profile, selection or
argument (nothing ran), 1 the kit broke, 130 interrupted (cleanups ran).`;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      "base-url": { type: "string" },
      origin: { type: "string" },
      profile: { type: "string" },
      area: { type: "string", multiple: true },
      transcript: { type: "string", multiple: true },
      junit: { type: "string" },
      json: { type: "string" },
      "json-report": { type: "string" },
      account: { type: "string" },
      "secondary-account": { type: "string" },
      "trainable-base": { type: "string" },
      "timeout-minutes": { type: "string" },
      key: { type: "string" },
      out: { type: "string" },
      force: { type: "boolean" },
      concurrency: { type: "string" },
      bail: { type: "boolean" },
      verbose: { type: "boolean" },
      "no-color": { type: "boolean" },
      port: { type: "string" },
      host: { type: "string" },
      help: { type: "boolean", short: "h" },
      // fuzz
      seed: { type: "string" },
      requests: { type: "string" },
      sequences: { type: "string" },
      minutes: { type: "string" },
      engine: { type: "string", multiple: true },
      "keep-going": { type: "boolean" },
      huge: { type: "boolean" },
      html: { type: "string" },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return EXIT.OK;
  }
  const command = positionals[0] ?? "run";
  const profileFile = values.profile ?? path.join(kitRoot(), "profiles/reference.json");
  const overrides = {
    ...(values["base-url"] ? { baseUrl: values["base-url"] } : {}),
    ...(values.origin ? { origin: values.origin } : {}),
  };
  const color = !values["no-color"] && process.stdout.isTTY === true;

  switch (command) {
    case "run": {
      const profile = loadProfile(profileFile, overrides);
      const minutes = Number(values["timeout-minutes"] ?? DEFAULT_TIMEOUT_MINUTES);
      if (!(minutes > 0))
        throw new ProfileError(`--timeout-minutes must be a number above 0, not ${values["timeout-minutes"]}`);
      const interrupt = interruptOnCtrlC();
      const report = await runConformance({
        profile,
        signal: interrupt.signal,
        timeLimitMs: minutes * 60_000,
        onStart: ({ total }) => {
          if (process.stderr.isTTY) process.stderr.write(`Running ${total} transcripts against ${profile.baseUrl}\n`);
        },
        ...(values.area ? { areas: values.area } : {}),
        ...(values.transcript ? { transcripts: values.transcript } : {}),
        ...(values.concurrency ? { concurrency: Number(values.concurrency) } : {}),
        stopOnFirstFailure: values.bail === true,
        onResult: (r) => {
          if (!process.stderr.isTTY) return;
          process.stderr.write(r.status === "passed" ? "." : r.status === "skipped" ? "s" : "F");
        },
      });
      interrupt.dispose();
      if (process.stderr.isTTY) process.stderr.write("\n");
      console.log(
        textReport(report, { color, verbose: values.verbose === true, baseUrl: profile.baseUrl, rules: loadRules() }),
      );
      const written = writeOutputs(report, {
        junit: values.junit ?? inReports("conformance.xml"),
        json: values["json-report"] ?? values.json ?? inReports("conformance.json"),
        ...(values.html ? { html: values.html } : {}),
        baseUrl: profile.baseUrl,
      });
      console.log(`Wrote ${written.join(" and ")}`);
      return report.interrupted && !report.timedOut ? EXIT.INTERRUPTED : report.failed > 0 ? EXIT.FAILED : EXIT.OK;
    }
    case "init": {
      const result = await initProfile({
        out: values.out ?? inReports("conformance-profile.json"),
        ...(values["secondary-account"] !== undefined ? { secondaryAccount: values["secondary-account"] } : {}),
        ...(values["trainable-base"] !== undefined ? { trainableBase: values["trainable-base"] } : {}),
        force: values.force === true,
        ...(values["base-url"] ? { baseUrl: values["base-url"] } : {}),
        ...(values.account !== undefined ? { account: values.account } : {}),
        ...(values.key !== undefined ? { key: values.key } : {}),
      });
      for (const note of result.notes) console.log(`  ${note}`);
      console.log(
        `\nWrote ${result.file}. Check it, export CONFORMANCE_PRIMARY_KEY and CONFORMANCE_SECONDARY_KEY, then run:\n  conformance run --profile ${result.file}\n(npx conformance … where the kit is installed; npm run conformance -- … in its repository)`,
      );
      return EXIT.OK;
    }
    case "fuzz": {
      const interrupt = interruptOnCtrlC();
      try {
        return await fuzzCommand({
          profile: loadProfile(profileFile, overrides),
          seed: values.seed,
          requests: values.requests,
          sequences: values.sequences,
          minutes: values.minutes,
          engine: values.engine,
          keepGoing: values["keep-going"] === true,
          huge: values.huge === true,
          junit: values.junit,
          json: values["json-report"] ?? values.json,
          ...(values.html ? { html: values.html } : {}),
          color,
          signal: interrupt.signal,
        });
      } finally {
        interrupt.dispose();
      }
    }
    case "record":
      return record(profileFile, overrides, color);
    case "mock": {
      const profile = loadProfile(profileFile, { baseUrl: "http://127.0.0.1/v1" });
      const mock = await startMockServer({
        profile,
        port: Number(values.port ?? 8090),
        host: values.host ?? "127.0.0.1",
      });
      console.log(
        `Mock server: each transcript is served at ${mock.url}/<area>/<name>/v1 (for example ${mock.url}/responses/stream-events/v1)`,
      );
      console.log(
        "Point the client under test at one transcript's base URL and make that transcript's requests in order.",
      );
      return await new Promise<number>(() => undefined);
    }
    case "coverage":
      return coverage();
    case "list": {
      for (const t of loadTranscripts())
        console.log(`${t.id.padEnd(48)} ${t.title}${t.requires.length ? `  [requires ${t.requires.join(", ")}]` : ""}`);
      return 0;
    }
    default:
      console.error(`unknown command ${command}\n\n${USAGE}`);
      return EXIT.USAGE;
  }
}

/**
 * The first Ctrl-C interrupts the run: no new step starts, and the cleanups (cancel the
 * jobs, delete the datasets the run made) still run. A second one exits at once.
 */
function interruptOnCtrlC(): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const onSignal = () => {
    if (controller.signal.aborted) process.exit(EXIT.INTERRUPTED);
    console.error("\nInterrupted: cleaning up what the run made (Ctrl-C again to quit at once)…");
    controller.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return {
    signal: controller.signal,
    dispose: () => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    },
  };
}

/** Writes the reports; returns the files written. */
function writeOutputs(
  report: RunReport,
  to: { junit: string; json: string; html?: string; baseUrl: string },
): string[] {
  const files = [to.junit, to.json, ...(to.html ? [to.html] : [])];
  for (const file of files) mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  writeFileSync(to.junit, junitReport(report));
  writeFileSync(to.json, jsonReport(report));
  if (to.html)
    writeFileSync(
      to.html,
      htmlReport(report, {
        baseUrl: to.baseUrl,
        rules: loadRules(),
        transcripts: loadTranscripts(),
        leftLines: [...timeLimitLines(report), ...cleanupLines(report)],
      }),
    );
  return files;
}

/**
 * `reports/<file>`, the folder made when missing with a .gitignore that ignores it all, so
 * a profile or report written into a checkout is never committed by accident.
 */
function inReports(file: string): string {
  if (!existsSync(REPORTS)) {
    mkdirSync(REPORTS, { recursive: true });
    writeFileSync(
      path.join(REPORTS, ".gitignore"),
      "# Written by the conformance kit: profiles and reports stay out of git.\n*\n",
    );
  }
  return path.join(REPORTS, file);
}

async function record(profileFile: string, overrides: { baseUrl?: string }, color: boolean): Promise<number> {
  let stop: (() => Promise<void>) | undefined;
  let baseUrl = overrides.baseUrl;
  if (!baseUrl) {
    const started = await startReferenceServer();
    baseUrl = started.baseUrl;
    stop = started.close;
    console.log(`Started the reference server at ${baseUrl}`);
  }
  try {
    const profile = loadProfile(profileFile, { ...overrides, baseUrl });
    // The server started here holds CHECKPOINTING long enough for the kit to cancel in it.
    if (stop !== undefined) profile.settings = { ...profile.settings, checkpointingMs: RECORD_CHECKPOINT_HOLD_MS };
    const writer = new GoldenWriter(path.join(kitRoot(), "goldens"));
    // One transcript at a time, so that lists hold the same items in the same order on every recording.
    const report = await runConformance({ profile, recorder: writer, runId: "rrecord0001", concurrency: 1 });
    const passed = report.details.filter((r) => r.status === "passed").map((r) => r.transcript);
    const written = writer.write(passed);
    console.log(textReport(report, { color, baseUrl }));
    console.log(
      `\nWrote ${written.length} goldens under ${path.relative(process.cwd(), path.join(kitRoot(), "goldens")) || "goldens"}/; review them with git diff.`,
    );
    const failed = report.details.filter((r) => r.status === "failed").map((r) => r.transcript);
    if (failed.length) console.log(`Not rewritten (failed against the reference server): ${failed.join(", ")}`);
    return report.failed > 0 ? EXIT.FAILED : EXIT.OK;
  } finally {
    await stop?.();
  }
}

interface ReferenceServer {
  baseUrl: string;
  store: { accounts: { update(id: string, patch: { requestsPerMinute: number | null }): Promise<unknown> } };
  close(): Promise<void>;
}

/** How long the recording server's jobs stay in CHECKPOINTING (as harness/conformance-reference.ts's). */
const RECORD_CHECKPOINT_HOLD_MS = 500;

/** The reference server of this repository, in-process, on a fresh data directory with the development seed. */
async function startReferenceServer(): Promise<{ baseUrl: string; close: () => Promise<void> }> {
  const serverModule = path.join(kitRoot(), "../server/server.ts");
  const { startServer } = (await import(serverModule)) as {
    startServer: (options: Record<string, unknown>) => Promise<ReferenceServer>;
  };
  const dir = mkdtempSync(path.join(os.tmpdir(), "conformance-record-"));
  const server = await startServer({
    dataDir: path.join(dir, "data"),
    port: 0,
    host: "127.0.0.1",
    validateResponses: true,
    devSeed: true,
    fineTuning: { pollMs: 50, checkpointHoldMs: RECORD_CHECKPOINT_HOLD_MS },
  });
  for (const account of ["acme", "globex"]) await server.store.accounts.update(account, { requestsPerMinute: null });
  return {
    baseUrl: server.baseUrl,
    close: async () => {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function coverage(): number {
  const contract = Contract.load();
  const rules = loadRules();
  const transcripts = loadTranscripts();
  const cov = staticCoverage(transcripts, contract, rules);
  let ok = true;
  const section = (title: string, map: Map<string, string[]>) => {
    const missing = [...map].filter(([, ts]) => ts.length === 0).map(([k]) => k);
    console.log(
      `${title}: ${map.size - missing.length}/${map.size}${missing.length ? `  missing: ${missing.join(", ")}` : ""}`,
    );
    return missing;
  };
  if (section("operations", cov.operations).length) ok = false;
  section("error codes expected", cov.errorCodes);
  if (section("rules named", cov.rules).length) ok = false;
  for (const u of cov.unknownRules) {
    console.log(`unknown rule ${u.rule} in ${u.transcript}`);
    ok = false;
  }
  return ok ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    const usage = [ProfileError, TranscriptError, SelectionError, CapabilityError, InitError, FuzzUsageError].some(
      (kind) => error instanceof kind,
    );
    if (usage) console.error(`conformance: ${(error as Error).message}`);
    else console.error(error);
    process.exit(usage ? EXIT.USAGE : EXIT.ERROR);
  },
);

export type { Profile };
