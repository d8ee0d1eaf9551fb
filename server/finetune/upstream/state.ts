/**
 * What an upstream-trained job keeps between runs, beside its local checkpoints: the
 * upstream's file ids and job id, and since when the upstream has been unreachable. It
 * lives in DATA_DIR (shared by every process, like checkpoints), written durably, so a
 * restarted server, or another one sharing the store, resumes polling the same upstream
 * job instead of creating a second one.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { writeFileDurably } from "../files.ts";

export interface UpstreamState {
  /** The job's base model: whose trainer settings reach the upstream job (a cancel needs them). */
  baseModel?: string;
  trainingFileId?: string;
  validationFileId?: string;
  upstreamJobId?: string;
  /** Unix milliseconds of the first failed call in a row; unset while the upstream answers. */
  unreachableSince?: number;
  /** Rows sent as the training file, and the validation file (the job's execution counts). */
  examplesTrained?: number;
  examplesSkipped?: number;
  /** Tokens of the rows sent, as the estimate counts them: progress until the upstream reports its own count. */
  tokensPerEpoch?: number;
  evalExamples?: number;
}

export function upstreamStateFile(dataDir: string, accountId: string, jobId: string): string {
  return path.join(dataDir, "checkpoints", accountId, `${jobId}.upstream.json`);
}

export async function readUpstreamState(file: string): Promise<UpstreamState> {
  try {
    return JSON.parse(await readFile(file, "utf8")) as UpstreamState;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw error;
  }
}

export function writeUpstreamState(file: string, state: UpstreamState): Promise<void> {
  return writeFileDurably(file, new TextEncoder().encode(JSON.stringify(state)));
}

/** The file a tuned model's record points to: which upstream model serves it. */
export interface UpstreamModelFile {
  trainer: "openai-fine-tuning";
  /** The upstream's name of the tuned model (`fine_tuned_model`). */
  model: string;
}

export function upstreamModelPath(accountId: string, modelId: string): string {
  return path.join("models", accountId, `${modelId}.upstream.json`);
}

export function isUpstreamModelPath(adapterPath: string): boolean {
  return adapterPath.endsWith(".upstream.json");
}
