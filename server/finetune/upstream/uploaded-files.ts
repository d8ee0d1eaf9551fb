/**
 * The job's rows uploaded to the upstream trainer (its training and validation files)
 * are deleted there once the upstream job has ended or will never run: the account's
 * data leaves this machine for the training only, not for the upstream's file store.
 * Best effort: a file the upstream cannot delete now stays, and the log names it.
 */
import { log } from "../../log.ts";
import { type OpenAiFineTuningApi, UpstreamNotFound } from "./openai-api.ts";
import type { UpstreamState } from "./state.ts";

export async function deleteUploadedFiles(
  api: OpenAiFineTuningApi,
  state: UpstreamState,
  job: string,
  timeoutMs: number,
): Promise<void> {
  const signal = AbortSignal.timeout(timeoutMs);
  for (const file of [state.trainingFileId, state.validationFileId]) {
    if (file === undefined) continue;
    try {
      await api.deleteFile(file, signal);
      log("info", "job.upstream_file_deleted", { job, file });
    } catch (error) {
      // Deleted already (by another process that ended the job too): nothing left there.
      if (error instanceof UpstreamNotFound) continue;
      log("warn", "job.upstream_file_kept", { job, file, detail: String(error) });
    }
  }
}
