/**
 * Job creation sends an `Idempotency-Key` on its own, so a create that is retried after
 * a lost answer returns the first job instead of starting a second billable run.
 */
import type { paths } from "./types.ts";

/** The paths whose POST takes an `Idempotency-Key` header in the contract. */
type IdempotentPostPath = {
  [P in keyof paths]: paths[P] extends { post: { parameters: { header?: infer H } } }
    ? [NonNullable<H>] extends [never]
      ? never
      : "Idempotency-Key" extends keyof NonNullable<H>
        ? P
        : never
    : never;
}[keyof paths];

/** The job creates (SFT and DPO). Written out because the client has no schema at run time… */
export const IDEMPOTENT_CREATE_PATHS = [
  "/accounts/{account}/supervisedFineTuningJobs",
  "/accounts/{account}/dpoJobs",
] as const satisfies readonly IdempotentPostPath[];

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;
/** …and checked against the contract: a new operation with the header fails `tsc` here until it is listed. */
export type IdempotentPathsMatchContract = Assert<Same<(typeof IDEMPOTENT_CREATE_PATHS)[number], IdempotentPostPath>>;

const CREATE_PATHS: ReadonlySet<string> = new Set(IDEMPOTENT_CREATE_PATHS);

/** A fresh key: a random UUID (Web Crypto, in browsers and Node alike). */
export const randomIdempotencyKey = (): string => globalThis.crypto.randomUUID();

interface Init {
  params?: { header?: Record<string, unknown> };
  headers?: unknown;
}

/** Whether a header is set, in openapi-fetch's `params.header` or `headers` (object or Headers). */
export function hasHeader(init: Init, name: string): boolean {
  const lower = name.toLowerCase();
  const has = (headers: unknown): boolean => {
    if (headers === undefined || headers === null) return false;
    if (typeof Headers !== "undefined" && headers instanceof Headers) return headers.has(name);
    if (Array.isArray(headers))
      return headers.some(([key, value]) => String(key).toLowerCase() === lower && value != null);
    return Object.entries(headers as Record<string, unknown>).some(
      ([key, value]) => key.toLowerCase() === lower && value != null,
    );
  };
  return has(init.params?.header) || has(init.headers);
}

/**
 * The init with an `Idempotency-Key` added when the call is a job create without one.
 * The key is chosen once per call, before any retry, so every attempt carries the same.
 */
export function withIdempotencyKey<T extends Init>(method: string, path: string, init: T, newKey: () => string): T {
  if (method.toUpperCase() !== "POST" || !CREATE_PATHS.has(path) || hasHeader(init, "Idempotency-Key")) return init;
  return { ...init, params: { ...init.params, header: { ...init.params?.header, "Idempotency-Key": newKey() } } };
}
