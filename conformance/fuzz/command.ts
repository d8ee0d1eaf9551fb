/**
 * `conformance fuzz --base-url … --profile …`: the fuzzer as a command. Prints progress, each
 * finding (rule, request, answer, curl), then the report as `conformance run` prints it; writes
 * JUnit and JSON like `run`; exit 0 with no finding, 8 with one (exit.ts).
 */
import { writeFileSync } from "node:fs";
import { EXIT } from "../exit.ts";
import { loadRules } from "../coverage.ts";
import type { Profile } from "../profile.ts";
import { jsonReport, junitReport, textReport } from "../report.ts";
import { htmlReport } from "../report-html.ts";
import { findingText } from "./findings.ts";
import { formatStateful } from "./stateful/run.ts";
import { formatStateless } from "./stateless.ts";
import { fuzz, type FuzzEngine } from "./index.ts";

export const FUZZ_USAGE = `Options of fuzz:
  --seed <n>            repeat a run (default: a new seed, printed)
  --requests <n>        stateless requests (default 500)
  --sequences <n>       stateful command sequences (default 20)
  --minutes <t>         stop each engine after t minutes
  --engine <name>       stateless or stateful (repeatable; default both)
  --keep-going          record every stateless finding instead of stopping at the first and shrinking it
  --huge                megabyte values and 100k-level nesting too
  --junit <file>, --json-report <file>, --html <file>   reports as for run (HTML from this repository's toolkit CLI)`;

export interface FuzzCommandOptions {
  profile: Profile;
  seed?: string;
  requests?: string;
  sequences?: string;
  minutes?: string;
  engine?: string[];
  keepGoing?: boolean;
  huge?: boolean;
  junit?: string;
  json?: string;
  html?: string;
  color: boolean;
  signal?: AbortSignal;
}

export class FuzzUsageError extends Error {
  override name = "FuzzUsageError";
}

function count(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new FuzzUsageError(`--${name} must be a whole number, got ${value}`);
  return n;
}

export async function fuzzCommand(options: FuzzCommandOptions): Promise<number> {
  const engines = (options.engine ?? ["stateless", "stateful"]) as FuzzEngine[];
  const unknown = engines.filter((e) => e !== "stateless" && e !== "stateful");
  if (unknown.length) throw new FuzzUsageError(`--engine is stateless or stateful, not ${unknown.join(", ")}`);
  const seed = count(options.seed, "seed");
  const minutes = options.minutes === undefined ? undefined : Number(options.minutes);
  if (minutes !== undefined && !(minutes > 0)) throw new FuzzUsageError(`--minutes must be positive`);
  const requests = count(options.requests, "requests");
  const sequences = count(options.sequences, "sequences");
  const result = await fuzz({
    profile: options.profile,
    engines,
    ...(seed !== undefined ? { seed } : {}),
    ...(requests !== undefined ? { requests } : {}),
    ...(sequences !== undefined ? { sequences } : {}),
    ...(minutes !== undefined ? { timeLimitMs: minutes * 60_000 } : {}),
    ...(options.keepGoing ? { keepGoing: true } : {}),
    ...(options.huge ? { huge: true } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    onProgress: (line) => {
      if (process.stderr.isTTY) process.stderr.write(`\r${line}   `);
    },
  });
  if (process.stderr.isTTY) process.stderr.write("\n");
  console.log(`conformance fuzz, seed ${result.seed} (repeat with --seed ${result.seed})`);
  if (result.stateless) console.log(formatStateless(result.stateless));
  if (result.stateful) console.log(formatStateful(result.stateful));
  for (const note of result.notes) console.log(`note: ${note}`);
  for (const finding of result.findings) console.log(`\nFINDING ${findingText(finding)}`);
  if (options.junit) writeFileSync(options.junit, junitReport(result.report));
  if (options.json) writeFileSync(options.json, jsonReport(result.report));
  if (options.html)
    writeFileSync(
      options.html,
      htmlReport(result.report, { baseUrl: options.profile.baseUrl, rules: loadRules(), title: "conformance fuzz" }),
    );
  console.log(
    `\n${textReport(result.report, { color: options.color, baseUrl: options.profile.baseUrl, rules: loadRules() })}`,
  );
  return result.report.interrupted ? EXIT.INTERRUPTED : result.findings.length > 0 ? EXIT.FAILED : EXIT.OK;
}
