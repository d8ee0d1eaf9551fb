/**
 * A conformance run report with every status in it (passed, failed, skipped, not implemented),
 * shaped like the kit's RunReport, for the HTML report tests.
 */
import type { Rule } from "../../conformance/coverage.ts";
import type { RunReport, StepFailure, TranscriptResult } from "../../conformance/runner.ts";

export const FIXTURE_RULES: Rule[] = [
  {
    id: "responses-1",
    text: "A stored response can be fetched by its id.",
    source: "interface document, responses rule 1",
  },
  {
    id: "errors-2",
    text: "Every error answer carries error.code, error.type and error.message.",
    source: "interface document, error rule 2",
  },
  {
    id: "stream-order",
    text: "Events follow the order of the events table.",
    source: "interface document, events table",
  },
  {
    id: "reasoning-summary",
    text: "A reasoning model answers with a reasoning item first.",
    source: "interface document, reasoning",
  },
  { id: "paging-1", text: "A page token is only valid with the same parameters.", source: "decision: paging" },
];

const failure: StepFailure = {
  transcript: "errors/unknown-model",
  step: "ask-unknown-model",
  rule: "errors-2",
  message:
    "a model that does not exist: body.error.code: expected MODEL_NOT_FOUND, got NOT_FOUND [POST /responses → 404]",
  expected: { status: 404, body: { error: { code: "MODEL_NOT_FOUND", type: "not_found_error" } } },
  received: {
    status: 404,
    body: {
      error: { code: "NOT_FOUND", type: "not_found_error", message: "No such thing <b>here</b>", param: "model" },
    },
  },
  requestId: "req_0123456789abcdef01234567",
};

const streamFailure: StepFailure = {
  transcript: "responses/stream-events",
  step: 2,
  rule: "stream-order",
  message: "stream: event 4: expected response.output_text.delta, got response.completed [POST /responses → 200]",
  expected: ["response.created", "response.in_progress", "response.output_item.added", "response.output_text.delta"],
  received: ["response.created", "response.in_progress", "response.output_item.added", "response.completed"],
  requestId: "req_fedcba9876543210fedcba98",
};

function result(
  transcript: string,
  title: string,
  status: TranscriptResult["status"],
  rules: string[],
  extra: Partial<TranscriptResult> = {},
): TranscriptResult {
  return { transcript, title, status, durationMs: 42, rules, requests: 3, failures: [], ...extra };
}

const details: TranscriptResult[] = [
  result("responses/store-and-get", "A stored response is fetched by id", "passed", ["responses-1"]),
  result("responses/stream-events", "The events of a streamed response", "failed", ["stream-order"], {
    failures: [streamFailure],
  }),
  result("responses/reasoning", "A reasoning model thinks first", "not-implemented", ["reasoning-summary"], {
    reason: "calls createResponse, which the profile does not implement",
  }),
  result("errors/unknown-model", "An unknown model is 404 MODEL_NOT_FOUND", "failed", ["errors-2"], {
    failures: [failure],
  }),
  result("errors/bad-key", "A bad key is 401", "passed", ["errors-2"]),
  result("datasets/paging", "Paging keeps its parameters", "skipped", ["paging-1"], {
    reason: "setup _setup/dataset was skipped: the run stopped",
  }),
];

export const FIXTURE_REPORT: RunReport = {
  passed: 2,
  rateLimitWaitedMs: 0,
  failed: 2,
  skipped: 1,
  notImplemented: 1,
  interrupted: false,
  timedOut: false,
  inFlight: [],
  leftBehind: [],
  modelsLeft: [],
  made: { datasets: 0, jobs: 0 },
  failures: [streamFailure, failure],
  results: details.map((d) => ({
    transcript: d.transcript,
    status: d.status,
    ...(d.reason ? { reason: d.reason } : {}),
    durationMs: d.durationMs,
  })),
  coverage: {
    operations: {
      total: 24,
      touched: 18,
      missing: [
        "getDatasetVersion",
        "cancelDpoJob",
        "getDpoJobMetrics",
        "listDpoJobs",
        "estimateDpoJobCost",
        "createDpoJob",
      ],
    },
    statusCodes: { total: 120, touched: 77, missing: [] },
    errorCodes: {
      total: 33,
      touched: 29,
      missing: ["UPSTREAM_TIMEOUT", "UPSTREAM_UNAVAILABLE", "PARTIAL_RESPONSE_TIMEOUT", "UPSTREAM_RATE_LIMITED"],
    },
    rules: { total: 5, touched: 4, missing: ["paging-1"], passed: 2 },
  },
  durationMs: 12_345,
  details,
  profile: "fixture",
  contractVersion: "0.2.0",
  runId: "rfixture01",
  requests: 18,
};
