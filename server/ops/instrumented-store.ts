/**
 * The store seen through metrics and the log: every call of every area is timed
 * (store_operation_duration_seconds) and its failures counted (store_errors_total), and
 * the calls that move a job or a dataset through its life write one log line each
 * (`job.created`, `job.state`, `dataset.uploaded`, `dataset.validated`, …) and feed the
 * job and validation metrics.
 *
 * Wrapped at the Store interface, so neither store implementation knows of it, and what
 * a call returns is passed on untouched. Lines carry names, states and sizes only: never
 * rows, file content or keys.
 */
import { storeErrorCode } from "../http/store-errors.ts";
import { log } from "../log.ts";
import { datasetName, versionName, WHOLE_FILE, type VersionKey, type VersionRecord } from "../store/datasets.ts";
import { StoreError } from "../store/errors.ts";
import { jobName, TERMINAL_STATES, type ClaimedJob, type JobPatch, type JobRecord } from "../store/fine-tuning.ts";
import type { Store } from "../store/store.ts";
import {
  datasetValidationBytes,
  datasetValidationLines,
  datasetValidations,
  jobDuration,
  storeDuration,
  storeErrors,
} from "./metrics.ts";
import type { HistogramSeries } from "./series-metrics.ts";

type Area = Exclude<keyof Store, "close">;
const AREAS: readonly Area[] = ["accounts", "apiKeys", "usage", "rateWindows", "datasets", "fineTuning", "owners"];

/** What happens after a successful call, by `area.method`: its log line and metrics. */
type Observer = (args: unknown[], result: unknown) => void;

const OBSERVERS: Record<string, Observer> = {
  "fineTuning.createJob": (_args, result) => {
    const { job, created } = result as { job: JobRecord; created: boolean };
    if (created)
      log("info", "job.created", {
        job: jobName(job.accountId, job.jobId),
        type: job.jobType,
        baseModel: job.baseModel,
        account: job.accountId,
      });
  },
  "fineTuning.claimJob": (_args, result) => {
    const claimed = result as ClaimedJob | undefined;
    if (claimed)
      log("info", "job.claimed", {
        job: jobName(claimed.job.accountId, claimed.job.jobId),
        resumed: claimed.resumed,
        checkpointEpoch: claimed.job.checkpointEpoch,
      });
  },
  "fineTuning.updateJob": (args, result) => {
    const patch = args[2] as JobPatch;
    if (patch.state !== undefined && result !== undefined) jobStateChanged(result as JobRecord);
  },
  "fineTuning.completeJob": (_args, result) => jobStateChanged(result as JobRecord),
  "fineTuning.expireQueued": (_args, result) => {
    if ((result as number) > 0) log("info", "job.expired", { count: result as number });
  },
  "datasets.create": (args) => {
    const dataset = args[0] as { accountId: string; datasetId: string; source: string };
    log("info", "dataset.created", {
      dataset: datasetName(dataset.accountId, dataset.datasetId),
      source: dataset.source,
    });
  },
  "datasets.markDeleted": (args) =>
    log("info", "dataset.deleted", { dataset: datasetName(args[0] as string, args[1] as string) }),
  "datasets.completeUpload": (args) =>
    log("info", "dataset.uploaded", { version: versionName(args[0] as VersionKey), bytes: args[1] as number }),
  "datasets.abandonUpload": (args) =>
    log("warn", "dataset.upload_abandoned", { version: versionName(args[0] as VersionKey) }),
  "datasets.finishValidation": (_args, result) => {
    if (result !== undefined) datasetValidated(result as VersionRecord);
  },
};

function jobStateChanged(job: JobRecord): void {
  const name = jobName(job.accountId, job.jobId);
  const terminal = TERMINAL_STATES.has(job.state);
  log(job.state === "JOB_STATE_FAILED" ? "warn" : "info", "job.state", {
    job: name,
    state: job.state,
    errorClass: job.errorClass,
    percent: job.progress.percent,
    checkpointEpoch: job.checkpointEpoch,
    processedTokens: terminal ? job.progress.processedTokens : undefined,
  });
  if (terminal && job.completeTime !== undefined) {
    jobDuration.observe(
      { type: job.jobType, state: job.state },
      (job.completeTime.getTime() - job.createTime.getTime()) / 1000,
    );
  }
}

function datasetValidated(version: VersionRecord): void {
  const ready = version.state === "DATASET_VERSION_STATE_READY";
  datasetValidations.inc({ result: ready ? "ready" : "failed" });
  datasetValidationBytes.inc(version.bytes);
  datasetValidationLines.inc(version.validation.totalLines);
  log(ready ? "info" : "warn", "dataset.validated", {
    version: versionName(version),
    state: version.state,
    bytes: version.bytes,
    lines: version.validation.totalLines,
    validLines: version.validation.validLines,
    examples: version.validation.exampleCount,
    ...validationFailure(version.validation.firstInvalidLine),
  });
}

/**
 * The line number only (the reason may quote the row); a failure no line is to blame for
 * (line 0, datasets/check-file.ts) is the reason itself, as the API reports it.
 */
function validationFailure(line: { lineNumber: number; reason: string } | undefined) {
  if (line === undefined) return {};
  return line.lineNumber === WHOLE_FILE ? { failureReason: line.reason } : { firstInvalidLine: line.lineNumber };
}

export interface InstrumentOptions {
  /**
   * Time every call and count failures (metrics on). Without it only the calls that write
   * a lifecycle line are wrapped: a server that logs but exports no metrics pays nothing
   * on the other calls (the timing was a third of the log's cost in bench/ops-overhead.ts).
   */
  timed: boolean;
}

/** The same store, its areas timed and observed; anything else it carries (its cache version) passes as it is. */
export function instrumentStore<S extends Store>(store: S, options: InstrumentOptions): S {
  const areas = Object.fromEntries(AREAS.map((area) => [area, instrumentArea(area, store[area], options)])) as Pick<
    Store,
    Area
  >;
  return { ...store, ...areas, close: () => store.close() };
}

function instrumentArea<T extends object>(area: string, target: T, options: InstrumentOptions): T {
  // Each method wrapped once, and again if the target's method is replaced (as cached-store.ts).
  const wrapped = new Map<string, { method: unknown; wrapper: unknown }>();
  return new Proxy(target, {
    get(object, property) {
      const value: unknown = Reflect.get(object, property, object);
      if (typeof value !== "function" || typeof property !== "string") return value;
      let entry = wrapped.get(property);
      if (entry?.method !== value) {
        const method = value as (...args: unknown[]) => unknown;
        const operation = `${area}.${property}`;
        const wrapper = options.timed ? timedCall(operation, method, object) : observedCall(operation, method, object);
        wrapped.set(property, (entry = { method: value, wrapper }));
      }
      return entry.wrapper;
    },
  });
}

/** The method itself when nothing observes it, else the method followed by its observer (no timing). */
function observedCall(
  operation: string,
  method: (...args: unknown[]) => unknown,
  self: object,
): (...args: unknown[]) => unknown {
  const observe = OBSERVERS[operation];
  if (observe === undefined) return method.bind(self);
  return (...args: unknown[]) => {
    const result = method.apply(self, args);
    if (!(result instanceof Promise)) return result;
    return result.then((value: unknown) => {
      observe(args, value);
      return value;
    });
  };
}

function timedCall(
  operation: string,
  method: (...args: unknown[]) => unknown,
  self: object,
): (...args: unknown[]) => unknown {
  const observe = OBSERVERS[operation];
  // Resolved at the first success, so that a method only ever failing shows no "ok" series.
  let ok: HistogramSeries | undefined;
  return (...args: unknown[]) => {
    const started = performance.now();
    const failed = (error: unknown) => {
      storeDuration.series({ operation, outcome: "error" }).observe((performance.now() - started) / 1000);
      storeErrors.series({ operation, code: error instanceof StoreError ? storeErrorCode(error) : "UNKNOWN" }).inc();
    };
    let result: unknown;
    try {
      result = method.apply(self, args);
    } catch (error) {
      failed(error);
      throw error;
    }
    // Synchronous members (versionFile) and async iterables are passed on as they are.
    if (!(result instanceof Promise)) return result;
    return result.then(
      (value: unknown) => {
        ok ??= storeDuration.series({ operation, outcome: "ok" });
        ok.observe((performance.now() - started) / 1000);
        observe?.(args, value);
        return value;
      },
      (error: unknown) => {
        failed(error);
        throw error;
      },
    );
  };
}
