/**
 * The cancel route's side of an upstream job (upstream-training.ts is the runner's).
 */
import { log } from "../../log.ts";
import { jobName } from "../../store/fine-tuning.ts";
import { OpenAiFineTuningApi } from "./openai-api.ts";
import { readUpstreamState, upstreamStateFile } from "./state.ts";
import { deleteUploadedFiles } from "./uploaded-files.ts";
import { CANCEL_TIMEOUT_MS, JOB_METADATA_KEY, upstreamTrainerOf } from "./upstream-training.ts";

/**
 * Cancels the upstream job of a job just cancelled, whoever holds it: the runner that
 * trains it cancels it too, but when no runner holds the job (every process that could
 * was down) nobody else would, and the upstream would train, and bill, on. A job that
 * never went upstream has no state file; cancelling an upstream job twice is harmless. Its
 * uploaded files are deleted there after the cancel.
 */
export async function cancelUpstreamJob(dataDir: string, accountId: string, jobId: string): Promise<void> {
  const state = await readUpstreamState(upstreamStateFile(dataDir, accountId, jobId)).catch(() => undefined);
  const settings = state?.baseModel === undefined ? undefined : upstreamTrainerOf({ baseModel: state.baseModel });
  if (state === undefined || settings === undefined) return;
  const api = new OpenAiFineTuningApi(settings);
  const signal = AbortSignal.timeout(CANCEL_TIMEOUT_MS);
  const name = jobName(accountId, jobId);
  try {
    const id = state.upstreamJobId ?? (await api.findJob(JOB_METADATA_KEY, name, signal))?.id;
    if (id !== undefined && (await api.cancelIfRunning(id, signal)))
      log("info", "job.upstream_cancelled", { job: name, upstreamJob: id });
  } catch (error) {
    log("warn", "job.upstream_cancel_failed", { job: name, detail: String(error) });
    return;
  }
  await deleteUploadedFiles(api, state, name, CANCEL_TIMEOUT_MS);
}
