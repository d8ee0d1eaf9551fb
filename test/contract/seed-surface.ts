/**
 * What the interface document (docs/interface-document-v0.2.0.md) and
 * docs/contract-decisions.md say the contract must contain, written out as data. The tests
 * compare the generated documents with these tables; nothing here is read from the
 * TypeSpec sources.
 */

export const ACCOUNT = "/accounts/{account}";
export const JOB_COLLECTIONS = ["supervisedFineTuningJobs", "dpoJobs"] as const;

export interface ExpectedOperation {
  method: string;
  path: string;
}

/** Endpoints 1 and 2: the inference operations that generate text. */
export const GENERATING_OPERATIONS: ExpectedOperation[] = [
  { method: "POST", path: "/responses" },
  { method: "POST", path: "/chat/completions" },
  { method: "POST", path: "/completions" },
  { method: "POST", path: "/messages" },
];

/** Endpoint 2: model listing. */
export const MODEL_OPERATIONS: ExpectedOperation[] = [
  { method: "GET", path: "/models" },
  { method: "GET", path: "/models/{model}" },
];

/** Endpoints 9 and 10 with the decided dataset paths. */
export const DATASET_OPERATIONS: ExpectedOperation[] = [
  { method: "POST", path: `${ACCOUNT}/datasets` },
  { method: "GET", path: `${ACCOUNT}/datasets` },
  { method: "GET", path: `${ACCOUNT}/datasets/{dataset}` },
  { method: "DELETE", path: `${ACCOUNT}/datasets/{dataset}` },
  { method: "POST", path: `${ACCOUNT}/datasets/{dataset}:upload` },
  { method: "POST", path: `${ACCOUNT}/datasets/{dataset}:validateUpload` },
  { method: "GET", path: `${ACCOUNT}/datasets/{dataset}/versions/{version}` },
];

/** The paths of one job collection (endpoints 3 to 8; the full set for both types is decided). */
export function jobPaths(collection: string) {
  const base = `${ACCOUNT}/${collection}`;
  return {
    estimateCost: { method: "POST", path: `${base}:estimateCost` },
    create: { method: "POST", path: base },
    list: { method: "GET", path: base },
    get: { method: "GET", path: `${base}/{job}` },
    cancel: { method: "POST", path: `${base}/{job}:cancel` },
    metrics: { method: "GET", path: `${base}/{job}/metrics` },
  } satisfies Record<string, ExpectedOperation>;
}

export const JOB_OPERATIONS: ExpectedOperation[] = JOB_COLLECTIONS.flatMap((c) => Object.values(jobPaths(c)));

export const ALL_OPERATIONS: ExpectedOperation[] = [
  ...GENERATING_OPERATIONS,
  ...MODEL_OPERATIONS,
  ...DATASET_OPERATIONS,
  ...JOB_OPERATIONS,
];

/** Errors: codes by HTTP status (the seed's table, plus the decided 404 and 409 codes). */
export const CODES_BY_STATUS: Record<string, readonly string[]> = {
  "400": [
    "CONTENT_BLOCKED_INPUT",
    "CONTENT_BLOCKED_OUTPUT",
    "CONTEXT_LENGTH_EXCEEDED",
    "INVALID_REQUEST",
    "MEDIA_FETCH_FAILED",
    "MEDIA_UNSUPPORTED",
    "MODEL_CAPABILITY_UNSUPPORTED",
    "UPSTREAM_CONTENT_REJECTED",
  ],
  "401": ["INVALID_API_KEY"],
  "402": ["INSUFFICIENT_BALANCE", "PAYMENT_REQUIRED"],
  "403": ["AGREEMENT_REQUIRED", "MODEL_NOT_ALLOWED", "OPERATION_NOT_ALLOWED", "TENANT_SUSPENDED"],
  "404": ["MODEL_NOT_FOUND", "NOT_FOUND"],
  "409": ["JOB_STATE_INVALID", "IDEMPOTENCY_CONFLICT", "ALREADY_EXISTS"],
  "413": ["MEDIA_TOO_LARGE"],
  "429": ["TENANT_BUDGET_EXCEEDED", "TENANT_RATE_LIMITED", "UPSTREAM_RATE_LIMITED"],
  "500": ["INTERNAL"],
  "503": ["DEPLOYMENT_SCALING_UP", "STORAGE_UNAVAILABLE", "UPSTREAM_UNAVAILABLE"],
  "504": ["PARTIAL_RESPONSE_TIMEOUT", "REQUEST_DEADLINE_EXCEEDED", "UPSTREAM_TIMEOUT"],
};

/** Codes with no status: logged, never sent (decisions: 499 in logs). */
export const UNSENT_CODES = ["REQUEST_CANCELLED"];

/**
 * Codes sent for requests that match no operation, so no operation can declare them
 * (docs/decisions.md: a known path with a method it does not have is 405).
 */
export const NO_OPERATION_CODES: Record<string, readonly string[]> = {
  "405": ["METHOD_NOT_ALLOWED"],
};

/** Every error code the document and the decisions name. */
export const ALL_ERROR_CODES: string[] = [
  ...Object.values(CODES_BY_STATUS).flat(),
  ...Object.values(NO_OPERATION_CODES).flat(),
  ...UNSENT_CODES,
];

/** Decisions, Errors: the error.type of each HTTP status. */
export const TYPE_BY_STATUS: Record<string, string> = {
  "400": "invalid_request_error",
  "401": "authentication_error",
  "402": "billing_error",
  "403": "permission_error",
  "404": "not_found_error",
  "405": "invalid_request_error",
  "409": "invalid_request_error",
  "413": "invalid_request_error",
  "429": "rate_limit_error",
  "500": "server_error",
  "503": "service_unavailable",
  "504": "server_error",
};

/** Errors: the eight error.type values. */
export const ERROR_TYPES = [
  "invalid_request_error",
  "authentication_error",
  "permission_error",
  "not_found_error",
  "rate_limit_error",
  "server_error",
  "service_unavailable",
  "billing_error",
];

/** Endpoint 1: the error statuses of POST /responses (shared by every generating endpoint). */
export const INFERENCE_ERROR_STATUSES = ["400", "401", "402", "403", "404", "413", "429", "500", "503", "504"];

/** The error statuses any operation can meet: bad input, key, account, missing thing, limits, failures. */
export const COMMON_ERROR_STATUSES = ["400", "401", "403", "404", "429", "500", "503"];

/** Events: the SSE events of a streamed POST /responses (the seed's core and the decided extras). */
export const RESPONSE_STREAM_EVENTS = [
  "response.created",
  "response.in_progress",
  "response.output_item.added",
  "response.content_part.added",
  "response.output_text.delta",
  "response.output_text.done",
  "response.content_part.done",
  "response.function_call_arguments.delta",
  "response.function_call_arguments.done",
  "response.output_item.done",
  "response.completed",
  "error",
];

/** Decisions, Messages: the events of a streamed POST /messages (that vendor's format). */
export const MESSAGES_STREAM_EVENTS = [
  "message_start",
  "content_block_start",
  "ping",
  "content_block_delta",
  "content_block_stop",
  "message_delta",
  "message_stop",
  "error",
];
