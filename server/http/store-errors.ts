/**
 * The HTTP edge of the store's errors: each kind of refusal (server/store/errors.ts) leaves
 * as the envelope's code, with the store's message and the input it names as `param`.
 */
import { StoreError, type StoreErrorKind } from "../store/errors.ts";
import { ApiError, type SentErrorCode } from "../api-error.ts";

const CODE_BY_KIND: Record<StoreErrorKind, SentErrorCode> = {
  "not-found": "NOT_FOUND",
  "already-exists": "ALREADY_EXISTS",
  // A deleted dataset, or one with nothing validated to use, is a request to change, not a conflict to retry.
  "dataset-unusable": "INVALID_REQUEST",
  "job-state": "JOB_STATE_INVALID",
  "idempotency-conflict": "IDEMPOTENCY_CONFLICT",
  unavailable: "STORAGE_UNAVAILABLE",
  "invalid-text": "INVALID_REQUEST",
};

/** The envelope code a store refusal is answered with. */
export function storeErrorCode(error: StoreError): SentErrorCode {
  return CODE_BY_KIND[error.kind];
}

export function fromStoreError(error: StoreError): ApiError {
  return new ApiError(storeErrorCode(error), error.message, {
    param: error.field,
    retryAfter: error.retryAfterSeconds,
    cause: error,
  });
}

/** Whether an error was raised on purpose (an answer to give), rather than a bug. */
export function isMeantError(error: unknown): error is ApiError | StoreError {
  return error instanceof ApiError || error instanceof StoreError;
}

/**
 * The answer an error was meant to be: an ApiError as it is, a store refusal mapped to its
 * code; undefined for anything else (a bug, answered as 500 INTERNAL where it is caught).
 */
export function meantApiError(error: unknown): ApiError | undefined {
  if (error instanceof ApiError) return error;
  if (error instanceof StoreError) return fromStoreError(error);
  return undefined;
}
