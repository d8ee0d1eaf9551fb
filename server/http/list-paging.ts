/**
 * The list parameters every list operation shares (the decisions' paging): a state
 * filter written `state:READY` or with the full enum value, and an opaque page token
 * bound to the parameters it was issued for (reused with others it is 400).
 */
import { ApiError } from "../api-error.ts";

/**
 * `state:X` or `state:{prefix}X`, X one of `states` (full enum values starting with
 * `prefix`); undefined for no filter ("").
 */
export function parseStateFilter<S extends string>(
  filter: string,
  prefix: string,
  states: readonly S[],
): S | undefined {
  if (filter.trim() === "") return undefined;
  const match = /^\s*state\s*:\s*([A-Z_]+)\s*$/.exec(filter);
  const name = match?.[1];
  const state = name === undefined ? undefined : ((name.startsWith(prefix) ? name : `${prefix}${name}`) as S);
  if (state === undefined || !states.includes(state)) {
    const names = states.map((s) => s.slice(prefix.length)).join(", ");
    throw new ApiError("INVALID_REQUEST", `filter must be state:<STATE> with one of ${names}.`, { param: "filter" });
  }
  return state;
}

/**
 * An integer query parameter (`pageSize`, `maxPoints`), or `fallback` when absent. The
 * validator has checked its range, but its type coercion lets `Infinity` and `1e400`
 * through as Infinity, past `maximum` too: a value that is not a safe integer is 400 here.
 */
export function integerQuery(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new ApiError("INVALID_REQUEST", `${name}: must be integer.`, { param: name });
  return n;
}

interface PageToken {
  /** The position after which the next page starts (a creation sequence number). */
  after: number;
  /** The other parameters it was issued for. */
  query: string;
}

/** What a token is bound to: the list, the account and every other parameter. */
export function listBinding(list: string, accountId: string, pageSize: number, filter: string): string {
  return JSON.stringify([list, accountId, pageSize, filter]);
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
    throw new ApiError("INVALID_REQUEST", "pageToken is not a token this list issued; start again without it.", {
      param: "pageToken",
    });
  }
  if (token.query !== query) {
    throw new ApiError(
      "INVALID_REQUEST",
      "pageToken was issued for other list parameters; use it with the same pageSize and filter.",
      { param: "pageToken" },
    );
  }
  return token.after as number;
}
