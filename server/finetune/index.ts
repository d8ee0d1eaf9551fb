/**
 * The fine-tuning side of the server: the job routes, the job runner, and the
 * deployments of the models it produces.
 */
import type { AccountModels } from "../inference/models.ts";
import type { Store } from "../store/store.ts";
import { Deployments, type UpstreamModelProvider } from "./deployments.ts";
import { registerJobRoutes } from "./routes.ts";
import { JobRunner, type RunnerEvent } from "./runner.ts";
import { cancelUpstreamJob } from "./upstream/cancel.ts";
import type { OperationHandlers } from "../http/operation-routes.ts";
import { defaultOf } from "../settings/parse.ts";

export interface FineTuningOptions {
  store: Store;
  dataDir: string;
  /** How long a runner's hold on a job lasts without renewal (default JOB_LEASE_MS's, 30 s). */
  leaseMs?: number;
  /** How often an idle runner looks for queued jobs (default JOB_POLL_MS's, 1 s; a create wakes it at once). */
  pollMs?: number;
  /** A job QUEUED longer than this EXPIRES (default 24 h). */
  queueTtlMs?: number;
  /**
   * The least time a job stays in CHECKPOINTING at the first epoch end of its run (default
   * 0: as long as saving takes, a few milliseconds here). The development server and the
   * conformance kit's reference server set it, as a hosted trainer's slower checkpoint
   * would, so that a client can see the state and the kit can prove a cancel there is
   * refused; one hold a job, so jobs stay about as fast.
   */
  checkpointHoldMs?: number;
  /** Run jobs in this process (default true); a process that only serves the API sets false. */
  runJobs?: boolean;
  /** Serves the models an upstream trainer tuned (server.ts builds OpenAI-compatible providers). */
  upstreamModelProvider?: UpstreamModelProvider;
  /** Told when the runner takes and lets go of a job. */
  onRunnerEvent?: (event: RunnerEvent) => void;
}

export interface FineTuningService {
  register(handlers: OperationHandlers): void;
  /** The account's fine-tuned models, for the model resolver. */
  models: AccountModels;
  /** Stops the runner; a job in training gets up to `graceMs` to reach its next checkpoint, then its lease is released. */
  close(graceMs?: number): Promise<void>;
}

export async function startFineTuning(options: FineTuningOptions): Promise<FineTuningService> {
  const deployments = new Deployments(options.store.fineTuning, options.dataDir, options.upstreamModelProvider);
  const runner = new JobRunner({
    store: options.store,
    dataDir: options.dataDir,
    deployments,
    leaseMs: options.leaseMs ?? defaultOf("JOB_LEASE_MS"),
    pollMs: options.pollMs ?? defaultOf("JOB_POLL_MS"),
    queueTtlMs: options.queueTtlMs ?? 24 * 3_600_000,
    checkpointHoldMs: options.checkpointHoldMs ?? 0,
    onEvent: options.onRunnerEvent,
  });
  if (options.runJobs !== false) runner.start();
  return {
    register: (handlers) =>
      registerJobRoutes(handlers, {
        store: options.store,
        wake: () => runner.wake(),
        cancelled: (accountId, jobId) => {
          runner.cancelled(accountId, jobId);
          void cancelUpstreamJob(options.dataDir, accountId, jobId);
        },
      }),
    models: deployments,
    close: (graceMs?: number) => runner.close(graceMs),
  };
}
