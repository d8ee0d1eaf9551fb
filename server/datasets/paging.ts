/**
 * The dataset list's parameters: the state filter and the opaque page token, which is
 * bound to the parameters it was issued for (reused with others it is 400).
 */
import { ApiError } from "../http/errors.ts";
import type { DatasetState } from "../store/datasets.ts";

const STATES: DatasetState[] = [
  "DATASET_STATE_CREATING",
  "DATASET_STATE_UPLOADING",
  "DATASET_STATE_VALIDATING",
  "DATASET_STATE_READY",
  "DATASET_STATE_FAILED",
  "DATASET_STATE_DELETED",
];

/** `state:READY` or `state:DATASET_STATE_READY`; undefined for no filter (""). */
export function parseStateFilter(filter: string): DatasetState | undefined {
  if (filter.trim() === "") return undefined;
  const match = /^\s*state\s*:\s*(?:DATASET_STATE_)?([A-Z]+)\s*$/.exec(filter);
  const state = match ? (`DATASET_STATE_${match[1]}` as DatasetState) : undefined;
  if (state === undefined || !STATES.includes(state)) {
    const names = STATES.map((s) => s.slice("DATASET_STATE_".length)).join(", ");
    throw new ApiError("INVALID_REQUEST", `filter must be state:<STATE> with one of ${names} (e.g. state:READY).`, { param: "filter" });
  }
  return state;
}

interface PageToken {
  /** The creation sequence number of the previous page's last dataset. */
  after: number;
  /** The other parameters it was issued for. */
  query: string;
}

/** What a token is bound to: the account and every other list parameter. */
export function listBinding(accountId: string, pageSize: number, filter: string): string {
  return JSON.stringify(["datasets", accountId, pageSize, filter]);
}

export function writePageToken(after: number, query: string): string {
  return Buffer.from(JSON.stringify({ after, query } satisfies PageToken)).toString("base64url");
}

/** The position a token stands for; 400 when it is not ours or was issued for other parameters. */
export function readPageToken(text: string, query: string): number {
  let token: Partial<PageToken> | undefined;
  try {
    token = JSON.parse(Buffer.from(text, "base64url").toString("utf8")) as Partial<PageToken>;
  } catch {
    token = undefined;
  }
  if (!Number.isSafeInteger(token?.after) || typeof token?.query !== "string") {
    throw new ApiError("INVALID_REQUEST", "pageToken is not a token this list issued; start again without it.", { param: "pageToken" });
  }
  if (token.query !== query) {
    throw new ApiError("INVALID_REQUEST", "pageToken was issued for other list parameters; use it with the same pageSize and filter.", { param: "pageToken" });
  }
  return token.after as number;
}
