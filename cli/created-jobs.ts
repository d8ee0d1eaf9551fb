/**
 * The jobs this tool created, remembered on this machine, so that `latest` means the newest
 * job the user created with the CLI, not whatever the account made last (a conformance run
 * creates and cancels jobs of its own; so may another program with the same key).
 *
 * One small JSON file, `$XDG_STATE_HOME/itk/created-jobs.json` (`~/.local/state/…` by
 * default), keyed by base URL and account, the newest job last, at most 50 per key.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { JobType } from "../client/index.ts";

const KEPT = 50;

export interface CreatedJob {
  name: string;
  jobId: string;
  jobType: JobType;
}

type Remembered = Record<string, CreatedJob[]>;

export function stateFile(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_STATE_HOME || path.join(env.HOME || os.homedir(), ".local", "state");
  return path.join(base, "itk", "created-jobs.json");
}

function read(file: string): Remembered {
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as unknown;
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Remembered) : {};
  } catch {
    // No file yet, or one this version cannot read: nothing remembered.
    return {};
  }
}

const keyOf = (baseUrl: string, account: string) => `${baseUrl} ${account}`;

/** The jobs created with this tool against this service and account, newest first. */
export function createdJobs(env: NodeJS.ProcessEnv, baseUrl: string, account: string): CreatedJob[] {
  const list = read(stateFile(env))[keyOf(baseUrl, account)];
  return Array.isArray(list) ? [...list].reverse() : [];
}

/**
 * Remembers a job just created. Best effort: a state directory that cannot be written
 * loses only the memory of `latest`, never the command's result, so the error is returned
 * for a note rather than thrown.
 */
export function rememberJob(
  env: NodeJS.ProcessEnv,
  baseUrl: string,
  account: string,
  job: CreatedJob,
): Error | undefined {
  const file = stateFile(env);
  try {
    const all = read(file);
    const key = keyOf(baseUrl, account);
    const list = (Array.isArray(all[key]) ? all[key] : []).filter((j) => j.name !== job.name);
    all[key] = [...list, { name: job.name, jobId: job.jobId, jobType: job.jobType }].slice(-KEPT);
    mkdirSync(path.dirname(file), { recursive: true });
    // Written whole and renamed, so two commands at once never leave half a file.
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify(all, null, 1));
    renameSync(temporary, file);
    return undefined;
  } catch (error) {
    return error as Error;
  }
}
