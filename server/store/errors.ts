/**
 * What the store says when it refuses a call, in its own terms: it knows records, ids and
 * databases, not HTTP. The HTTP edge (server/http/store-errors.ts) gives each kind its
 * error code and status; other callers (the training runner, the admin command) read the
 * kind directly.
 */

/**
 * - `not-found`: a record the caller named does not exist.
 * - `already-exists`: an id, a key's secret or an output model id is taken.
 * - `dataset-unusable`: the dataset or its latest version cannot take the call (deleted,
 *   no version yet, its file not completely uploaded).
 * - `job-state`: the job has left the state the call needs.
 * - `idempotency-conflict`: an idempotency key came back with another request.
 * - `unavailable`: the database (or the process receiving an upload) cannot serve the call
 *   now; the same call may succeed later.
 * - `invalid-text`: a value the database cannot hold or be asked about (PostgreSQL refuses
 *   the NUL character, U+0000, in text); the same call always fails.
 */
export type StoreErrorKind =
  | "not-found"
  | "already-exists"
  | "dataset-unusable"
  | "job-state"
  | "idempotency-conflict"
  | "unavailable"
  | "invalid-text";

export interface StoreErrorOptions {
  /** The input that named the missing, taken or conflicting thing (e.g. `dataset`, `config.outputModelId`). */
  field?: string;
  /** With `unavailable`: seconds after which a retry may succeed. */
  retryAfterSeconds?: number;
  /** The database's own error this refusal stands for, for the server's log. */
  cause?: unknown;
}

export class StoreError extends Error {
  readonly kind: StoreErrorKind;
  readonly field: string | null;
  readonly retryAfterSeconds: number | undefined;

  constructor(kind: StoreErrorKind, message: string, options: StoreErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "StoreError";
    this.kind = kind;
    this.field = options.field ?? null;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/** Whether `error` is the store's refusal of the given kind. */
export function isStoreError(error: unknown, kind?: StoreErrorKind): error is StoreError {
  return error instanceof StoreError && (kind === undefined || error.kind === kind);
}
