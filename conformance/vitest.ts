/**
 * The kit as a vitest suite, for an implementer's own repository:
 *
 *   // conformance.test.ts
 *   import { conformanceSuite } from "@inference-toolkit/conformance/vitest";
 *   conformanceSuite({ profile: "conformance/my-service.json", baseUrl: process.env.CONFORMANCE_BASE_URL });
 *
 * One vitest test per transcript, grouped by area; a failure's message is the CLI's text for
 * it (rule, expected, received, the request sent, the request id). A transcript skipped for a
 * missing profile value or outside the profile's `implements` is a skipped test with the
 * reason. The transcripts run once, in the kit's order and concurrency (setups first, the
 * rate-limit budget and the cleanup at the end), however vitest orders the tests: each test
 * waits for its transcript's result.
 */
import { afterAll, describe, test } from "vitest";
import { loadProfile, type Profile } from "./profile.ts";
import { failureText } from "./report.ts";
import { runConformance, select, type RunReport, type TranscriptResult } from "./runner.ts";
import { loadTranscripts, type Transcript } from "./transcript.ts";

export interface ConformanceSuiteOptions {
  /** A profile file (see the kit's README), or a profile already loaded (`loadProfile`, `parseProfile`). */
  profile: string | Profile;
  /** Overrides the profile's baseUrl (`http://host:port/v1`). */
  baseUrl?: string;
  /** Only these areas or transcripts, as `--area` and `--transcript` select them. */
  areas?: string[];
  transcripts?: string[];
  /**
   * Each test's timeout (default 30 minutes): a test waits for its transcript, and the
   * transcripts run in the kit's order, fine-tuning ones waiting for their jobs.
   */
  timeoutMs?: number;
  /** Called with the whole run's report when the last transcript ended (to write a JUnit or HTML file). */
  onReport?: (report: RunReport) => void;
}

/** The suite registered; `report()` resolves with the whole run's report once its cleanup ended. */
export interface ConformanceSuite {
  report(): Promise<RunReport>;
}

export function conformanceSuite(options: ConformanceSuiteOptions): ConformanceSuite {
  const overrides = options.baseUrl === undefined ? {} : { baseUrl: options.baseUrl };
  const profile: Profile =
    typeof options.profile === "string"
      ? loadProfile(options.profile, overrides)
      : { ...options.profile, ...overrides };
  const all = loadTranscripts();
  const chosen = select(all, { areas: options.areas, transcripts: options.transcripts });
  const results = new Map<string, Deferred<TranscriptResult>>(chosen.map((t) => [t.id, deferred<TranscriptResult>()]));
  let run: Promise<RunReport> | undefined;
  const start = (): Promise<RunReport> =>
    (run ??= runConformance({
      profile,
      areas: options.areas,
      transcripts: options.transcripts,
      transcriptList: all,
      // The run ends (what was in flight reported as failed) before the tests waiting on it time out.
      timeLimitMs: options.timeoutMs ?? 30 * 60_000,
      onResult: (result) => results.get(result.transcript)?.resolve(result),
    }).then((report) => {
      // A transcript the run never reported (it cannot happen short of a kit bug) fails its test rather than hanging it.
      for (const [id, d] of results) d.reject(new Error(`the run ended without a result for ${id}`));
      options.onReport?.(report);
      return report;
    }));
  /** The run, started once; a run that throws (a kit error) fails every waiting test. */
  const started = (): Promise<RunReport> => {
    const current = start();
    current.catch((error: unknown) => {
      for (const d of results.values()) d.reject(error);
    });
    return current;
  };
  afterAll(async () => {
    await run?.catch(() => {});
  });
  for (const [area, transcripts] of byArea(chosen)) {
    describe(area, () => {
      for (const transcript of transcripts) {
        test(
          `${transcript.id}: ${transcript.title}`,
          { timeout: options.timeoutMs ?? 30 * 60_000 },
          async (context) => {
            void started();
            const result = await results.get(transcript.id)!.promise;
            if (result.status === "skipped") context.skip(`skipped: ${result.reason ?? ""}`);
            if (result.status === "not-implemented") context.skip(`not implemented: ${result.reason ?? ""}`);
            if (result.status === "failed") throw new ConformanceFailure(failureText(result));
          },
        );
      }
    });
  }
  return { report: started };
}

class ConformanceFailure extends Error {
  override name = "ConformanceFailure";
}

function byArea(transcripts: Transcript[]): Map<string, Transcript[]> {
  const areas = new Map<string, Transcript[]>();
  for (const t of transcripts) areas.set(t.area, [...(areas.get(t.area) ?? []), t]);
  return areas;
}

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A test that never awaits it (filtered out by -t) must not turn a rejection into an unhandled one.
  promise.catch(() => {});
  return { promise, resolve, reject };
}
