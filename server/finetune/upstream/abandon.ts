/**
 * A job that FAILED here while its upstream job may still be training (the upstream
 * unreachable past the bound, or a failure on this side): the upstream job is cancelled,
 * so it does not go on training, and billing the operator, for a model nobody can use,
 * and the files uploaded for it are deleted there.
 * The upstream is often unreachable just then, so the cancel is retried with the poll's
 * backoff for as long again as the upstream may stay unreachable; then the log names the
 * upstream job for the operator to cancel by hand. It runs in the background: the job's
 * failure is not held up by it, and a process that exits meanwhile is not kept alive.
 */
import { setTimeout as delay } from "node:timers/promises";
import { log } from "../../log.ts";
import { ACTIVE_STATES, type JobRecord } from "../../store/fine-tuning.ts";
import { type OpenAiFineTuningApi, UpstreamUnreachable } from "./openai-api.ts";

export interface AbandonedUpstreamJob {
  api: OpenAiFineTuningApi;
  /** The job's name, for the log. */
  name: string;
  /** The upstream job: its stored id, or looked for by the job's metadata tag. */
  upstreamJobId(signal: AbortSignal): Promise<string | undefined>;
  /** Deletes the files uploaded for the job, once its upstream job has ended. */
  deleteFiles(): Promise<void>;
  /** The job's state in the store now (undefined when it cannot be read). */
  jobState(): Promise<JobRecord["state"] | undefined>;
  firstWaitMs: number;
  longestWaitMs: number;
  /** How long to keep trying. */
  boundMs: number;
  /** Each call's bound. */
  callTimeoutMs: number;
}

/**
 * Cancels the upstream job once the store shows the job FAILED (a failure the store did
 * not take, the store unreachable, leaves the job to the next runner, which resumes
 * polling: its upstream job must live on). Resolves when done or given up; never rejects.
 */
export async function abandonUpstreamJob(job: AbandonedUpstreamJob): Promise<void> {
  const until = Date.now() + job.boundMs;
  let wait = job.firstWaitMs;
  let lastProblem: string | undefined;
  while (Date.now() < until) {
    const state = await job.jobState().catch(() => undefined);
    // SUCCEEDED, CANCELLED (its cancel reaches the upstream on its own) or EXPIRED: nothing to do.
    if (state !== undefined && state !== "JOB_STATE_FAILED" && !ACTIVE_STATES.includes(state)) return;
    if (state === "JOB_STATE_FAILED") {
      try {
        await cancelIfRunning(job);
        await job.deleteFiles();
        return;
      } catch (error) {
        if (!(error instanceof UpstreamUnreachable)) {
          log("warn", "job.upstream_cancel_failed", { job: job.name, detail: String(error) });
          return;
        }
        lastProblem = error.message;
      }
    }
    await delay(Math.min(wait, Math.max(1, until - Date.now())), undefined, { ref: false });
    wait = Math.min(job.longestWaitMs, wait * 2);
  }
  // Never seen FAILED: still active (another runner polls it again) or never read; not this loop's to cancel.
  if (lastProblem === undefined) return;
  log("error", "job.upstream_abandoned", {
    job: job.name,
    detail: `the job FAILED here but its upstream job could not be cancelled within ${job.boundMs} ms (${lastProblem}); cancel it at the trainer`,
  });
}

async function cancelIfRunning(job: AbandonedUpstreamJob): Promise<void> {
  const signal = AbortSignal.timeout(job.callTimeoutMs);
  const id = await job.upstreamJobId(signal);
  if (id === undefined || !(await job.api.cancelIfRunning(id, signal))) return;
  log("info", "job.upstream_cancelled", { job: job.name, upstreamJob: id, reason: "the job failed here" });
}
