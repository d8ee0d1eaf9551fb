/**
 * What every part of a run shares: its options, the contract, the coverage being counted,
 * what it made, the setups started, and the two ways a transcript stops early.
 */
import type { Contract } from "./contract.ts";
import type { CoverageTracker, Rule } from "./coverage.ts";
import type { GoldenRecorder } from "./golden.ts";
import type { Exchange } from "./http.ts";
import type { Profile } from "./profile.ts";
import type { InFlight, Outcome, StepFailure, TranscriptResult } from "./results.ts";
import type { Transcript } from "./transcript.ts";
import type { Created } from "./cleanup.ts";

export interface RunOptions {
  profile: Profile;
  /** Only transcripts of these areas (and the setups they use). */
  areas?: string[];
  /** Only these transcripts, by id (`responses/stream-events`) or name. */
  transcripts?: string[];
  stopOnFirstFailure?: boolean;
  /** Transcripts running at once; default the profile's `concurrency`. */
  concurrency?: number;
  /** Pre-loaded transcripts (default: everything under conformance/transcripts). */
  transcriptList?: Transcript[];
  contract?: Contract;
  rules?: Rule[];
  fixturesDir?: string;
  goldensDir?: string;
  /** Where each transcript's requests go (the mock server serves each transcript at its own prefix). */
  targetFor?: (transcript: Transcript) => { baseUrl: string; origin: string };
  /** Called as each transcript ends. */
  onResult?: (result: TranscriptResult) => void;
  /** Record mode: receives every exchange of every step. */
  recorder?: GoldenRecorder;
  /** Fixed run id (default random): the `{{run}}` variable. */
  runId?: string;
  /**
   * Remove what the run made at its end (default true): every job it created is cancelled
   * and every dataset deleted, whatever the transcripts' own cleanup did. False keeps
   * them for inspection (and suits a mock that only replays recordings).
   */
  cleanUp?: boolean;
  /**
   * Interrupts the run (Ctrl-C): requests in flight are aborted, no further step or
   * transcript starts, and every cleanup still runs (without the signal).
   */
  signal?: AbortSignal;
  /**
   * The whole run's time limit (default none): when it passes, no step starts, requests in
   * flight are aborted and their transcripts fail under `kit.time-limit` naming the step and
   * request, the cleanup runs (itself bounded), and the report is returned as usual.
   */
  timeLimitMs?: number;
  /** Called once before anything runs with how many transcripts the report will hold (setups included). */
  onStart?: (plan: { total: number }) => void;
}

/** The run was interrupted (the signal): the transcript stops where it is, its cleanup runs. */
export class Interrupted extends Error {
  override name = "Interrupted";
}

export class StepFailed extends Error {
  readonly failures: StepFailure[];
  constructor(failures: StepFailure[]) {
    super(failures[0]?.message ?? "step failed");
    this.failures = failures;
  }
}

export interface SetupOutcome {
  status: Outcome;
  reason?: string;
  exports: Record<string, unknown>;
}

export interface RunContext {
  options: RunOptions;
  contract: Contract;
  coverage: CoverageTracker;
  runId: string;
  fixturesDir: string;
  goldensDir: string;
  byId: Map<string, Transcript>;
  setups: Map<string, Promise<SetupOutcome & { result?: TranscriptResult }>>;
  requests: number;
  /** Time spent honouring Retry-After of unexpected rate limits (wall time: waits that overlap count once). */
  rateLimitWaitedMs: number;
  /** When the latest of the waits in progress ends (performance.now()). */
  rateLimitWaitingUntil: number;
  /** Rule ids of the catalogue. */
  ruleIds: Set<string>;
  /** What the run made (datasets, jobs), removed at its end. */
  created: Created[];
  /** Cleanups of setups, run at the end of the run. */
  deferredCleanups: (() => Promise<void>)[];
  /** Every x-request-id seen in the run, with where: an id handles one request, so a repeat is a fault. */
  requestIds: Map<string, { where: string; exchange: Exchange }>;
  stopped: boolean;
  /** Aborts the steps: the caller's signal (Ctrl-C) or the time limit. */
  signal: AbortSignal;
  /** Set when the time limit passed (the signal aborted for it). */
  timedOut: boolean;
  /** Where each running transcript is: its step and the request awaiting an answer. */
  running: Map<string, InFlight>;
  /** Ends the cleanup's waits and requests when the cleanup's own time is up. */
  cleanupSignal?: AbortSignal;
}
