/**
 * `conformance run|record`: the conformance kit (conformance/) under the same tool.
 *
 * `run` calls the kit's library (loadProfile, runConformance) and prints its terminal
 * report; `--html` also writes the self-contained HTML report (conformance/report-html.ts, the kit's own page),
 * `--junit` and `--json-report` the kit's own files. The flags, the outcomes and the exit
 * codes are the kit's own command's (0 passed, 8 failed, 2 bad profile or selection, 130
 * interrupted), so a script reads either the same way. `record` is the kit's record mode,
 * run as the kit's CLI does it (it starts the reference server when no base URL is given
 * and rewrites the goldens). The kit is loaded only when one of these runs.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Command } from "commander";
import cliProgress from "cli-progress";
import { act, integer } from "../command.ts";
import { ENV, type Context } from "../context.ts";
import { CliError, EXIT, usageError } from "../errors.ts";
import { htmlReport } from "../../conformance/report-html.ts";
import type * as KitModule from "../../conformance/index.ts";

const KIT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../conformance");

type Kit = typeof KitModule;

async function loadKit(): Promise<Kit> {
  try {
    return await import("../../conformance/index.ts");
  } catch (error) {
    throw new CliError(
      `the conformance kit cannot be loaded from ${KIT}: ${(error as Error).message}`,
      EXIT.ERROR,
      [],
      {
        cause: error,
      },
    );
  }
}

interface RunFlags {
  profile?: string;
  origin?: string;
  area?: string[];
  transcript?: string[];
  html?: string;
  junit?: string;
  jsonReport?: string;
  concurrency?: number;
  bail?: boolean;
  timeoutMinutes?: number;
  verbose?: boolean;
}

/** The run's time limit without --timeout-minutes (the kit's own command has the same). */
const DEFAULT_TIMEOUT_MINUTES = 30;

/** The base URL only when the user gave one (flag or environment); otherwise the profile's. */
function explicitBaseUrl(ctx: Context): string | undefined {
  return ctx.options.baseUrl ?? ctx.io.env[ENV.baseUrl] ?? undefined;
}

function defaultProfile(): string {
  return path.join(KIT, "profiles/reference.json");
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

function write(file: string, text: string): void {
  mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  writeFileSync(file, text);
}

export function conformanceCommand(): Command {
  const conformance = new Command("conformance").description(
    "The conformance kit: replay the golden transcripts against an implementation and report what conforms.",
  );

  conformance
    .command("run")
    .description(
      "Run the transcripts against an implementation (the profile's base URL, or --base-url); exit 8 when any transcript failed.",
    )
    .option(
      "--profile <file>",
      "the profile: base URL, keys, models, capabilities (default: conformance/profiles/reference.json)",
    )
    .option("--origin <url>", "the implementation's origin (default: the base URL without /v1)")
    .option("--area <area>", "only this area (repeatable)", collect)
    .option("--transcript <id>", "only this transcript, such as responses/stream-events (repeatable)", collect)
    .option("--html <file>", "also write the report as one self-contained HTML page")
    .option("--junit <file>", "also write a JUnit XML report")
    .option("--json-report <file>", "also write the report as JSON (the kit's own command takes the same flag)")
    .option("--concurrency <n>", "transcripts at once (default: the profile's)", integer(1, 64))
    .option("--bail", "stop after the first failing transcript")
    .option(
      "--timeout-minutes <n>",
      `stop the whole run after n minutes (default ${DEFAULT_TIMEOUT_MINUTES}); what was in flight is reported, the cleanup runs`,
      integer(1, 24 * 60),
    )
    .option("--verbose", "list passing transcripts too")
    .action(
      act<[], RunFlags>(async (ctx, flags) => {
        const kit = await loadKit();
        const profileFile = flags.profile ?? defaultProfile();
        if (!existsSync(profileFile))
          throw usageError(`no profile at ${profileFile}`, [
            "pass --profile <file>; conformance/README.md describes one",
          ]);
        const baseUrl = explicitBaseUrl(ctx);
        const profile = kit.loadProfile(profileFile, {
          ...(baseUrl ? { baseUrl } : {}),
          ...(flags.origin ? { origin: flags.origin } : {}),
        });

        const all = kit.loadTranscripts();
        try {
          kit.select(all, {
            ...(flags.area ? { areas: flags.area } : {}),
            ...(flags.transcript ? { transcripts: flags.transcript } : {}),
          });
        } catch (error) {
          if (error instanceof kit.SelectionError) throw usageError(error.message, [], { cause: error });
          throw error;
        }
        let bar: cliProgress.SingleBar | undefined;
        const tally = { failed: 0, skipped: 0 };
        // The bar counts what the report will count (the kit's onStart): every selected transcript and the setups they use.
        const start = (total: number) => {
          announced = total;
          if (!ctx.live) {
            ctx.note(`Running ${total} transcripts (the setups they use included) against ${profile.baseUrl}…`);
            return;
          }
          bar = new cliProgress.SingleBar(
            {
              stream: ctx.io.stderr,
              format:
                "Conformance [{bar}] {value}/{total} transcripts | {failed} failed | {skipped} skipped | {duration_formatted}",
              hideCursor: true,
              gracefulExit: true,
              barsize: 30,
            },
            cliProgress.Presets.shades_classic,
          );
          bar.start(total, 0, tally);
        };
        // In a pipe or a log: a line every 10 s, so a run of a minute never looks like a hang.
        let done = 0;
        let announced = 0;
        const started = performance.now();
        const ticker = ctx.live
          ? undefined
          : setInterval(
              () =>
                ctx.note(
                  `… ${done}/${announced} transcripts, ${tally.failed} failed, ${tally.skipped} skipped (${Math.round((performance.now() - started) / 1000)} s)`,
                ),
              10_000,
            );
        ticker?.unref();
        // Ctrl-C: no new step starts and the run's cleanups (cancel jobs, delete datasets) still run.
        const interrupt = new AbortController();
        const onSignal = () => interrupt.abort();
        process.once("SIGINT", onSignal);
        let report;
        try {
          report = await kit.runConformance({
            profile,
            signal: interrupt.signal,
            transcriptList: all,
            ...(flags.area ? { areas: flags.area } : {}),
            ...(flags.transcript ? { transcripts: flags.transcript } : {}),
            ...(flags.concurrency ? { concurrency: flags.concurrency } : {}),
            stopOnFirstFailure: flags.bail === true,
            timeLimitMs: (flags.timeoutMinutes ?? DEFAULT_TIMEOUT_MINUTES) * 60_000,
            onStart: ({ total }) => start(total),
            onResult: (r) => {
              if (r.status === "failed") tally.failed++;
              if (r.status === "skipped") tally.skipped++;
              done++;
              bar?.increment(1, tally);
            },
          });
        } catch (error) {
          if (error instanceof kit.SelectionError || error instanceof kit.CapabilityError)
            throw usageError((error as Error).message, [], { cause: error });
          throw error;
        } finally {
          process.off("SIGINT", onSignal);
          clearInterval(ticker);
          bar?.stop();
        }
        const written: string[] = [];
        if (flags.junit) {
          write(flags.junit, kit.junitReport(report));
          written.push(`JUnit: ${flags.junit}`);
        }
        if (flags.jsonReport) {
          write(flags.jsonReport, kit.jsonReport(report));
          written.push(`JSON: ${flags.jsonReport}`);
        }
        if (flags.html) {
          write(
            flags.html,
            htmlReport(report, {
              baseUrl: profile.baseUrl,
              rules: kit.loadRules(),
              transcripts: all,
              leftLines: [...kit.timeLimitLines(report), ...kit.cleanupLines(report)],
            }),
          );
          written.push(`HTML: ${flags.html}`);
        }
        if (ctx.json) ctx.printJson(report);
        else {
          ctx.print(
            kit.textReport(report, {
              color: ctx.io.stdout.isTTY === true && ctx.options.color !== false && !ctx.io.env.NO_COLOR,
              verbose: flags.verbose === true,
              baseUrl: profile.baseUrl,
              rules: kit.loadRules(),
            }),
          );
          for (const line of written) ctx.print(`Wrote ${line}`);
        }
        if (report.interrupted && !report.timedOut)
          throw new CliError("interrupted; the run's cleanups ran", EXIT.INTERRUPTED);
        if (report.failed > 0)
          throw new CliError(`${report.failed} transcript${report.failed === 1 ? "" : "s"} failed`, EXIT.FAILED);
      }),
    );

  conformance
    .command("record")
    .description(
      "Re-run the transcripts against the reference server and rewrite the goldens (review them with git diff). Starts the reference server in-process unless --base-url or SERVICE_BASE_URL is given.",
    )
    .option("--profile <file>", "the profile (default: conformance/profiles/reference.json)")
    .action(
      act<[], { profile?: string }>(async (ctx, flags) => {
        const cli = path.join(KIT, "cli.ts");
        if (!existsSync(cli)) throw new CliError(`the conformance kit has no command at ${cli}`, EXIT.ERROR);
        const baseUrl = explicitBaseUrl(ctx);
        const args = [
          cli,
          "record",
          ...(baseUrl ? ["--base-url", baseUrl] : []),
          ...(flags.profile ? ["--profile", flags.profile] : []),
        ];
        const code = await new Promise<number>((resolve, reject) => {
          const child = spawn(process.execPath, args, { stdio: ["ignore", "inherit", "inherit"], env: ctx.io.env });
          child.on("error", reject);
          child.on("exit", (c, signal) => resolve(c ?? (signal ? 130 : 1)));
        });
        if (code === 1)
          throw new CliError(
            "some transcripts failed against the reference server; their goldens were not rewritten",
            EXIT.FAILED,
          );
        if (code !== 0)
          throw new CliError(`conformance record exited with ${code}`, code === 2 ? EXIT.USAGE : EXIT.ERROR);
      }),
    );

  return conformance;
}
