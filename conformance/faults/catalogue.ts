/**
 * The fault catalogue: each entry breaks exactly one rule of the interface document (or of
 * the contract decisions), the way an implementation in the wild could get it wrong.
 * Where a fault changes the structure of a stream (drops, duplicates or moves an event) it
 * renumbers `sequence_number` afterwards, so that only the rule it targets is broken and a
 * kit cannot catch it by accident through another check.
 *
 * `areas` names the conformance kit's areas whose transcripts are meant to catch the fault
 * (the fault test runs only those, with stopOnFirstFailure).
 */
import { randomBytes } from "node:crypto";
import { isObject, listAt, objectAt, objectsOf, stringAt, valueAt, type JsonObject } from "./json.ts";
import type { Fault, FaultContext, ProxyRequest, ProxyResponse, SseEvent } from "./proxy.ts";

// ---------------------------------------------------------------- request matchers

const RESPONSES = /\/responses$/;
const CHAT = /\/chat\/completions$/;
const MESSAGES = /\/messages$/;
const MODEL_GET = /\/models\/(.+)$/;
const INFERENCE = /\/(responses|chat\/completions|completions|messages)$/;
const ACCOUNT_PATH = /\/accounts\/([^/:]+)(\/|:|$)/;
const JOB_COLLECTION = /\/accounts\/([^/]+)\/(supervisedFineTuningJobs|dpoJobs)$/;
const JOB = /\/accounts\/([^/]+)\/(supervisedFineTuningJobs|dpoJobs)\/([^/:]+)$/;
const JOB_ANY = /\/accounts\/([^/]+)\/(supervisedFineTuningJobs|dpoJobs)\/([^/:]+)(:cancel|\/metrics)?$/;
const JOB_CANCEL = /\/accounts\/([^/]+)\/(supervisedFineTuningJobs|dpoJobs)\/([^/:]+):cancel$/;
const METRICS = /\/accounts\/([^/]+)\/(supervisedFineTuningJobs|dpoJobs)\/([^/:]+)\/metrics$/;
const ESTIMATE = /\/accounts\/([^/]+)\/(supervisedFineTuningJobs|dpoJobs):estimateCost$/;
const DATASETS = /\/accounts\/([^/]+)\/datasets$/;
const DATASET = /\/accounts\/([^/]+)\/datasets\/([^/:]+)$/;
const DATASET_VERSION = /\/accounts\/([^/]+)\/datasets\/([^/:]+)\/versions\/([^/:]+)$/;
const LIST = /\/accounts\/([^/]+)\/(supervisedFineTuningJobs|dpoJobs|datasets)$/;

const is = (request: ProxyRequest, method: string, pattern: RegExp) =>
  request.method === method && pattern.test(request.path);
const postResponses = (request: ProxyRequest) => is(request, "POST", RESPONSES);
const isStream = (response: ProxyResponse) => response.events !== undefined;
const errorCode = (response: ProxyResponse): string | undefined => stringAt(response.json, "error", "code");
/** The error object of an answer when its code is `code`; undefined otherwise. */
const errorWithCode = (response: ProxyResponse, code: string): JsonObject | undefined =>
  errorCode(response) === code ? objectAt(response.json, "error") : undefined;
const listKey = (path: string) => path.match(LIST)?.[2] as string;

// ---------------------------------------------------------------- helpers

function requestId(): string {
  return `req_${randomBytes(12).toString("hex")}`;
}

function jsonResponse(status: number, json: unknown, headers: Record<string, string | string[]> = {}): ProxyResponse {
  const body = Buffer.from(JSON.stringify(json));
  return {
    status,
    headers: { "content-type": "application/json; charset=utf-8", "x-request-id": requestId(), ...headers },
    body,
    json,
  };
}

/** Replaces a response's status and JSON body, keeping its headers (x-request-id stays). */
function replace(response: ProxyResponse, status: number, json: unknown): ProxyResponse {
  const body = Buffer.from(JSON.stringify(json));
  const headers: Record<string, string | string[]> = {
    ...response.headers,
    "content-type": "application/json; charset=utf-8",
  };
  delete headers["retry-after"];
  return { status, headers, body, json };
}

function withKey(request: ProxyRequest, key: string): ProxyRequest {
  const headers: Record<string, string> = { ...request.headers, authorization: `Bearer ${key}` };
  delete headers["x-api-key"];
  return { ...request, headers };
}

/** Sends the request upstream again as it is, but with other headers or path. */
function resend(ctx: FaultContext, request: ProxyRequest, changes: Partial<ProxyRequest> = {}): Promise<ProxyResponse> {
  const next = { ...request, ...changes };
  const json = next.json;
  return ctx.upstream({
    method: next.method,
    path: next.path,
    query: next.query,
    headers: next.headers,
    json,
    body: json === undefined && next.body.length > 0 ? next.body : undefined,
  });
}

function renumber(events: SseEvent[]): void {
  let n = 0;
  for (const event of events)
    if (isObject(event.json) && typeof event.json.sequence_number === "number") event.json.sequence_number = n++;
}

function clone(event: SseEvent): SseEvent {
  return { ...event, json: structuredClone(event.json) };
}

const indexOfEvent = (events: SseEvent[], name: string) => events.findIndex((e) => e.event === name);
const completed = (events: SseEvent[]) => events.find((e) => e.event === "response.completed");

/** The final response object of a /responses call, streamed or not. */
function finalResponse(response: ProxyResponse): JsonObject | undefined {
  if (response.events) return objectAt(completed(response.events)?.json, "response");
  return response.status === 200 ? objectAt(response.json) : undefined;
}

/** Every job object of a job answer (one job, or a list page). */
function jobsOf(response: ProxyResponse): JsonObject[] {
  const json = objectAt(response.json);
  if (!json || response.status >= 300) return [];
  if (Array.isArray(json.supervisedFineTuningJobs)) return objectsOf(json.supervisedFineTuningJobs);
  if (Array.isArray(json.dpoJobs)) return objectsOf(json.dpoJobs);
  return typeof json.jobType === "string" ? [json] : [];
}

function datasetsOf(response: ProxyResponse): JsonObject[] {
  const json = objectAt(response.json);
  if (!json || response.status >= 300) return [];
  if (Array.isArray(json.datasets)) return objectsOf(json.datasets);
  return typeof json.datasetId === "string" ? [json] : [];
}

/** Every dataset version object of a dataset answer: a dataset's or a list page's versions, or one version. */
function versionsOf(response: ProxyResponse): JsonObject[] {
  const own = objectAt(response.json);
  return [
    ...datasetsOf(response).flatMap((dataset) => objectsOf(dataset.versions)),
    ...(typeof own?.versionNo === "number" ? [own] : []),
  ];
}

function isInt64String(value: unknown): value is string {
  return typeof value === "string" && /^(0|[1-9][0-9]*)$/.test(value);
}

/** Requests whose Idempotency-Key the idempotency fault removed. */
const STRIPPED_KEYS = new WeakSet<ProxyRequest>();

const inferenceSuccess = (request: ProxyRequest) => request.method === "POST" && INFERENCE.test(request.path);

// ---------------------------------------------------------------- the catalogue

export const FAULTS: Fault[] = [
  // ---------------------------------------------------------------- headers
  {
    id: "headers.request-id-missing-on-errors",
    areas: ["errors", "auth"],
    transcripts: ["tenant/budget"],
    rule: "Headers/Errors: every error response carries x-request-id",
    description: "Error responses come without x-request-id (successes keep it).",
    onResponse(response) {
      if (response.status < 400 || response.headers["x-request-id"] === undefined) return;
      delete response.headers["x-request-id"];
      return response;
    },
  },
  {
    id: "headers.request-id-missing-on-streams",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "Headers: x-request-id on every response, success or error",
    description: "Streamed (text/event-stream) answers are sent without x-request-id.",
    match: inferenceSuccess,
    onResponse(response) {
      if (!isStream(response)) return;
      delete response.headers["x-request-id"];
      return response;
    },
  },
  {
    id: "headers.retry-after-missing-on-429",
    areas: ["tenant", "limits", "errors"],
    transcripts: ["tenant/budget"],
    rule: "Errors rule 3: Retry-After is set on 429 and 503",
    description: "429 answers come without Retry-After.",
    onResponse(response) {
      if (response.status !== 429) return;
      delete response.headers["retry-after"];
      return response;
    },
  },
  {
    id: "headers.retry-after-not-integer",
    areas: ["tenant", "limits", "errors"],
    transcripts: ["tenant/budget"],
    rule: "Headers: Retry-After is an integer >= 0 (seconds)",
    description: "Retry-After on 429/503 is an HTTP date instead of whole seconds.",
    onResponse(response) {
      if (response.status !== 429 && response.status !== 503) return;
      const seconds = Number(response.headers["retry-after"] ?? 1);
      response.headers["retry-after"] = new Date(Date.now() + seconds * 1000).toUTCString();
      return response;
    },
  },
  {
    id: "headers.retry-after-missing-on-503",
    areas: ["upstream"],
    transcripts: ["upstream/unavailable"],
    target: "upstream",
    rule: "Errors rule 3: Retry-After is set on 429 and 503",
    description: "503 answers (an upstream that cannot serve) come without Retry-After.",
    onResponse(response) {
      if (response.status !== 503 || response.headers["retry-after"] === undefined) return;
      delete response.headers["retry-after"];
      return response;
    },
  },
  {
    id: "headers.request-id-constant",
    areas: ["responses", "errors", "auth"],
    rule: "Headers: x-request-id is a handle for the whole path of one request (each request its own)",
    description: "Every answer carries the same x-request-id (a constant from a misconfigured proxy).",
    onResponse(response) {
      if (response.headers["x-request-id"] === undefined) return;
      response.headers["x-request-id"] = "req_000000000000000000000000";
      return response;
    },
  },
  {
    id: "headers.provider-class-missing",
    areas: ["responses", "events", "inference"],
    transcripts: ["responses/model-full-name"],
    rule: "Headers: x-provider-class on successful inference responses",
    description: "Successful inference answers lack x-provider-class.",
    match: inferenceSuccess,
    onResponse(response) {
      if (response.status !== 200) return;
      delete response.headers["x-provider-class"];
      return response;
    },
  },
  {
    id: "headers.provider-class-names-provider",
    areas: ["responses", "events", "inference"],
    transcripts: ["responses/model-full-name"],
    rule: "Headers: x-provider-class is primary or fallback and never names the provider",
    description: 'x-provider-class carries the provider\'s name ("local") instead of primary/fallback.',
    match: inferenceSuccess,
    onResponse(response) {
      if (response.status !== 200 || response.headers["x-provider-class"] === undefined) return;
      response.headers["x-provider-class"] = "local";
      return response;
    },
  },
  {
    id: "headers.config-version-missing",
    areas: ["responses", "events", "inference"],
    transcripts: ["responses/model-full-name"],
    rule: "Headers: x-config-version on successful inference responses",
    description: "Successful inference answers lack x-config-version.",
    match: inferenceSuccess,
    onResponse(response) {
      if (response.status !== 200) return;
      delete response.headers["x-config-version"];
      return response;
    },
  },

  // ---------------------------------------------------------------- POST /responses
  {
    id: "responses.store-true-accepted",
    areas: ["responses"],
    transcripts: ["responses/store-required"],
    rule: "Responses rule 1: when store is absent or true, the call is rejected",
    description:
      "store:true (or no store) is quietly treated as store:false and answered 200 with a plausible response.",
    match: postResponses,
    onRequest(request) {
      if (!isObject(request.json) || request.json.store === false) return;
      request.json.store = false;
      return request;
    },
  },
  {
    id: "responses.previous-response-id-ignored",
    areas: ["responses", "errors"],
    transcripts: ["responses/previous-response-id"],
    rule: "Responses rule 2 / Errors rule 1: previous_response_id returns INVALID_REQUEST",
    description: "previous_response_id is ignored like any unknown parameter; the call succeeds.",
    match: postResponses,
    onRequest(request) {
      if (!isObject(request.json) || !("previous_response_id" in request.json)) return;
      delete request.json.previous_response_id;
      return request;
    },
  },
  {
    id: "responses.stored-response-retrievable",
    areas: ["responses"],
    transcripts: ["responses/no-retrieval"],
    rule: "Responses rule 3: there is no GET or DELETE on /responses/{id}",
    description: "GET /responses/{id} answers 200 with a response object, as if responses were stored.",
    match: (request) =>
      (request.method === "GET" || request.method === "DELETE") && /\/responses\/[^/]+$/.test(request.path),
    respond(request) {
      const id = request.path.split("/").at(-1);
      return jsonResponse(200, {
        id,
        object: "response",
        created_at: Math.floor(Date.now() / 1000),
        status: "completed",
        model: "tiny-chat",
        output: [
          {
            id: `msg_${randomBytes(12).toString("hex")}`,
            type: "message",
            role: "assistant",
            status: "completed",
            content: [{ type: "output_text", text: "Hello!", annotations: [] }],
          },
        ],
        usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5 },
        store: false,
      });
    },
  },
  {
    id: "responses.function-items-rejected",
    areas: ["responses"],
    transcripts: ["responses/function-call-history"],
    rule: "Responses rule 4: earlier function_call and function_call_output items belong in input",
    description: "An input holding function_call / function_call_output items is rejected with 400 INVALID_REQUEST.",
    match: postResponses,
    respond(request) {
      const input = listAt(request.json, "input");
      const isFunctionItem = (item: unknown) =>
        valueAt(item, "type") === "function_call" || valueAt(item, "type") === "function_call_output";
      if (!input?.some(isFunctionItem)) return;
      const index = input.findIndex(isFunctionItem);
      return jsonResponse(400, {
        error: {
          message: "Unsupported input item type.",
          type: "invalid_request_error",
          code: "INVALID_REQUEST",
          param: `input[${index}]`,
        },
      });
    },
  },
  {
    id: "responses.non-function-tool-called",
    areas: ["responses"],
    transcripts: ["responses/non-function-tools-dropped"],
    rule: "Responses rule 5: non-function tools are dropped, so the model cannot call them",
    description:
      "With a hosted tool (web_search…) in tools, the answer is a call of that tool: a function_call item naming it.",
    match: postResponses,
    onResponse(response, request) {
      const hosted = objectsOf(listAt(request.json, "tools")).find((tool) => tool.type !== "function");
      const final = finalResponse(response);
      if (!hosted || !final || !Array.isArray(final.output)) return;
      const item = {
        id: `fc_${randomBytes(12).toString("hex")}`,
        type: "function_call",
        role: "assistant",
        status: "completed",
        call_id: `call_${randomBytes(8).toString("hex")}`,
        name: String(hosted.type),
        arguments: JSON.stringify({ query: "cats" }),
      };
      if (response.events) return; // a plain answer shows it; a stream would also need its events
      final.output = [item];
      return response;
    },
  },
  {
    id: "responses.instructions-not-counted",
    areas: ["responses"],
    transcripts: ["responses/instructions-count"],
    rule: "Responses rule 6: the instructions text counts toward input_tokens",
    description: "instructions are sent to the model but not counted: input_tokens (and total) leave them out.",
    match: postResponses,
    async onResponse(response, request, ctx) {
      const json = objectAt(request.json);
      if (typeof json?.instructions !== "string" || response.status !== 200) return;
      const { instructions: _dropped, ...bare } = json;
      const plain = await ctx.upstream({
        method: "POST",
        path: request.path,
        headers: request.headers,
        json: { ...bare, stream: false },
      });
      const inputWithout = valueAt(plain.json, "usage", "input_tokens");
      if (typeof inputWithout !== "number") return;
      const usage = objectAt(finalResponse(response), "usage");
      if (!usage) return;
      usage.input_tokens = inputWithout;
      usage.total_tokens = inputWithout + Number(usage.output_tokens);
      return response;
    },
  },
  {
    id: "responses.unknown-parameter-rejected",
    areas: ["responses", "errors"],
    transcripts: ["responses/unknown-params-ignored"],
    rule: "Errors rule 2 / Versioning: unknown request parameters are ignored, not rejected",
    description: "A body field the contract does not declare is rejected with 400 INVALID_REQUEST.",
    match: postResponses,
    respond(request) {
      const known = new Set([
        "model",
        "input",
        "instructions",
        "max_output_tokens",
        "temperature",
        "top_p",
        "stream",
        "tools",
        "tool_choice",
        "reasoning",
        "store",
        "previous_response_id",
        "metadata",
        "user",
        "parallel_tool_calls",
        "truncation",
        "text",
        "include",
        "stream_options",
        "service_tier",
        "background",
        "prompt",
        "top_logprobs",
        "max_tool_calls",
        "prompt_cache_key",
        "safety_identifier",
      ]);
      const unknown =
        request.json && typeof request.json === "object"
          ? Object.keys(request.json).find((k) => !known.has(k))
          : undefined;
      if (unknown === undefined) return;
      return jsonResponse(400, {
        error: {
          message: `Unknown parameter: '${unknown}'.`,
          type: "invalid_request_error",
          code: "INVALID_REQUEST",
          param: unknown,
        },
      });
    },
  },
  {
    id: "responses.store-echoed-true",
    areas: ["responses", "events"],
    transcripts: ["responses/model-full-name"],
    rule: "Response object: store is always false",
    description: "The response object (and response.completed) says store: true.",
    match: postResponses,
    onResponse(response) {
      const final = finalResponse(response);
      if (!final || final.store !== false) return;
      final.store = true;
      return response;
    },
  },
  {
    id: "responses.object-type-wrong",
    areas: ["responses"],
    transcripts: ["responses/model-full-name"],
    rule: 'Response object: object is always "response"',
    description: 'The plain response carries object: "chat.completion".',
    match: postResponses,
    onResponse(response) {
      const json = objectAt(response.json);
      if (response.status !== 200 || json?.object !== "response") return;
      json.object = "chat.completion";
      return response;
    },
  },
  {
    id: "responses.model-not-echoed",
    areas: ["responses", "events"],
    transcripts: ["events/stream-incomplete"],
    rule: "Response object: model is the model called, never an upstream vendor's own name",
    description:
      'The response names the upstream\'s model ("Qwen/Qwen3-8B") instead of the model the caller asked for.',
    match: postResponses,
    onResponse(response) {
      const final = finalResponse(response);
      if (!final || typeof final.model !== "string") return;
      final.model = "Qwen/Qwen3-8B";
      return response;
    },
  },
  {
    id: "responses.usage-arithmetic",
    areas: ["responses"],
    transcripts: ["responses/model-full-name"],
    rule: "Usage object: total_tokens = input_tokens + output_tokens",
    description: "A non-streamed response's total_tokens is one more than input + output.",
    match: postResponses,
    onResponse(response) {
      const usage = objectAt(response.json, "usage");
      if (isStream(response) || response.status !== 200 || !usage) return;
      usage.total_tokens = Number(usage.total_tokens) + 1;
      return response;
    },
  },
  {
    id: "responses.max-output-tokens-ignored",
    areas: ["responses"],
    transcripts: ["responses/incomplete"],
    rule: "Response status: incomplete (reason max_output_tokens) when the ceiling stopped it",
    description: "A response cut by max_output_tokens says status completed, without incomplete_details.",
    match: postResponses,
    onResponse(response) {
      const json = objectAt(response.json);
      if (isStream(response) || json?.status !== "incomplete") return;
      json.status = "completed";
      delete json.incomplete_details;
      return response;
    },
  },
  {
    id: "responses.undeclared-field",
    areas: ["responses"],
    transcripts: ["responses/model-full-name"],
    rule: "Contract: response objects are closed; no undeclared fields",
    description:
      "The response object carries an extra field user (an OpenAI Responses field this contract does not declare).",
    match: postResponses,
    onResponse(response) {
      const json = objectAt(response.json);
      if (isStream(response) || response.status !== 200 || !json) return;
      json.user = "alice";
      return response;
    },
  },
  {
    id: "responses.compatibility-not-echoed",
    areas: ["responses"],
    transcripts: ["responses/basic"],
    rule: "Decisions (compatibility fields): the response echoes the request's temperature and max_output_tokens",
    description:
      "The response reports the default temperature 1 and no max_output_tokens although the request set both.",
    match: postResponses,
    onResponse(response) {
      const json = objectAt(response.json);
      if (
        isStream(response) ||
        response.status !== 200 ||
        typeof json?.temperature !== "number" ||
        json.temperature === 1
      )
        return;
      json.temperature = 1;
      json.max_output_tokens = null;
      return response;
    },
  },
  {
    id: "sse.delta-without-logprobs",
    areas: ["events"],
    transcripts: ["events/stream-text"],
    rule: "Decisions (compatibility fields): text deltas carry logprobs, an empty list",
    description:
      "Every response.output_text.delta event lacks logprobs (as before the Open Responses compatibility fields).",
    match: postResponses,
    onResponse(response) {
      const deltas = objectsOf(
        (response.events ?? []).filter((e) => e.event === "response.output_text.delta").map((e) => e.json),
      );
      if (deltas.length === 0) return;
      for (const delta of deltas) delete delta.logprobs;
      return response;
    },
  },
  {
    id: "responses.id-missing",
    areas: ["responses"],
    transcripts: ["responses/model-full-name"],
    rule: "Response object: id is required",
    description: "The non-streamed response object has no id.",
    match: postResponses,
    onResponse(response) {
      const json = objectAt(response.json);
      if (isStream(response) || response.status !== 200 || json?.id === undefined) return;
      delete json.id;
      return response;
    },
  },
  {
    id: "responses.minimal-effort-rejected",
    areas: ["responses"],
    transcripts: ["responses/reasoning"],
    rule: "Responses request: reasoning effort minimal counts as low (accepted)",
    description: 'reasoning.effort "minimal" is rejected with 400 INVALID_REQUEST.',
    match: postResponses,
    respond(request) {
      if (valueAt(request.json, "reasoning", "effort") !== "minimal") return;
      return jsonResponse(400, {
        error: {
          message: "reasoning.effort must be low, medium or high.",
          type: "invalid_request_error",
          code: "INVALID_REQUEST",
          param: "reasoning.effort",
        },
      });
    },
  },
  {
    id: "responses.blocked-input-served",
    areas: ["responses"],
    transcripts: ["responses/content-blocked-input"],
    rule: "Errors (400 on /responses): input holding a blocked term is CONTENT_BLOCKED_INPUT",
    description: "The input content policy is not applied: a blocked input is answered (as a plain greeting).",
    match: postResponses,
    async onResponse(response, request, ctx) {
      const json = objectAt(request.json);
      if (errorCode(response) !== "CONTENT_BLOCKED_INPUT" || !json) return;
      const { instructions: _i, ...rest } = json;
      const served = await ctx.upstream({
        method: "POST",
        path: request.path,
        headers: request.headers,
        json: { ...rest, input: "Hello!" },
      });
      return served.status === 200 ? served : undefined;
    },
  },
  {
    id: "responses.context-window-not-checked",
    areas: ["responses"],
    transcripts: ["responses/context-length-input"],
    rule: "Errors (400 on /responses): input plus max_output_tokens over the context window is CONTEXT_LENGTH_EXCEEDED",
    description: "An over-long request is silently cut (input truncated, output ceiling lowered) and answered 200.",
    match: postResponses,
    async onResponse(response, request, ctx) {
      const json = objectAt(request.json);
      if (errorCode(response) !== "CONTEXT_LENGTH_EXCEEDED" || !json) return;
      const input = typeof json.input === "string" ? json.input.slice(-400) : "Hello!";
      const served = await ctx.upstream({
        method: "POST",
        path: request.path,
        headers: request.headers,
        json: { ...json, input, max_output_tokens: 16 },
      });
      return served.status === 200 ? served : undefined;
    },
  },
  {
    id: "responses.fine-tuned-model-not-served",
    areas: ["finetune"],
    transcripts: ["finetune/output-model"],
    rule: "Fine-tuning: a model produced by a job is served (on a dedicated deployment)",
    description: "Models in an account (accounts/{a}/models/…, …/deployments/…) are not found: 404 MODEL_NOT_FOUND.",
    match: inferenceSuccess,
    respond(request) {
      const model = stringAt(request.json, "model");
      if (model === undefined || !/^accounts\/(?!maas\/)[^/]+\/(models|deployments)\//.test(model)) return;
      return jsonResponse(404, {
        error: {
          message: `The model \`${model}\` does not exist or you do not have access to it.`,
          type: "not_found_error",
          code: "MODEL_NOT_FOUND",
          param: "model",
        },
      });
    },
  },
  {
    id: "responses.usage-zeroed",
    areas: ["responses"],
    transcripts: ["responses/instructions-count"],
    rule: "Usage object: the counts of the call (the last data event carries usage)",
    description: "A plain response reports usage 0/0/0 (the arithmetic holds, the counts are not the call's).",
    match: postResponses,
    onResponse(response) {
      const json = objectAt(response.json);
      const usage = objectAt(json, "usage");
      if (isStream(response) || response.status !== 200 || !json || !usage || usage.total_tokens === 0) return;
      json.usage = { ...usage, input_tokens: 0, output_tokens: 0, total_tokens: 0 };
      return response;
    },
  },
  {
    id: "responses.tool-choice-none-ignored",
    areas: ["responses"],
    transcripts: ["responses/tool-choice"],
    rule: "Responses request: tool_choice none means the model calls no tool",
    description: 'With tool_choice "none" the answer is still a function call of the first tool.',
    match: postResponses,
    onResponse(response, request) {
      const tool = objectsOf(listAt(request.json, "tools")).find((t) => t.type === "function");
      const json = objectAt(response.json);
      if (
        valueAt(request.json, "tool_choice") !== "none" ||
        !tool ||
        isStream(response) ||
        response.status !== 200 ||
        !Array.isArray(json?.output)
      )
        return;
      json.output = [
        {
          id: `fc_${randomBytes(12).toString("hex")}`,
          type: "function_call",
          role: "assistant",
          status: "completed",
          call_id: `call_${randomBytes(8).toString("hex")}`,
          name: tool.name,
          arguments: "{}",
        },
      ];
      return response;
    },
  },
  {
    id: "responses.function-arguments-not-json",
    areas: ["responses", "events"],
    transcripts: ["responses/tool-choice"],
    rule: "Output item: a function_call's arguments are the JSON text of the call's arguments",
    description: "function_call arguments are written as key: value text instead of JSON.",
    match: postResponses,
    onResponse(response) {
      const items = objectsOf(finalResponse(response)?.output).filter(
        (item) => item.type === "function_call" && typeof item.arguments === "string",
      );
      if (items.length === 0 || response.events) return;
      for (const item of items) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(String(item.arguments));
        } catch {
          continue;
        }
        item.arguments =
          Object.entries(objectAt(parsed) ?? {})
            .map(([k, v]) => `${k}: ${String(v)}`)
            .join(", ") || "none";
      }
      return response;
    },
  },
  {
    id: "responses.reasoning-item-missing",
    areas: ["responses", "events"],
    transcripts: ["responses/reasoning"],
    rule: "Decisions: a model that reasons answers with a reasoning item ({type: reasoning, summary})",
    description: "The reasoning item is left out of a reasoning model's answer.",
    match: postResponses,
    onResponse(response) {
      const json = objectAt(response.json);
      if (isStream(response) || response.status !== 200 || !Array.isArray(json?.output)) return;
      const output = json.output.filter((item) => valueAt(item, "type") !== "reasoning");
      if (output.length === json.output.length) return;
      json.output = output;
      return response;
    },
  },
  {
    id: "responses.string-input-rejected",
    areas: ["responses"],
    transcripts: ["tenant/budget"],
    rule: "Responses request: input is a string, or an array of items",
    description: "A plain string input is rejected with 400 (only arrays of items are accepted).",
    match: postResponses,
    respond(request) {
      if (typeof valueAt(request.json, "input") !== "string") return;
      return jsonResponse(400, {
        error: {
          message: "input must be an array of input items.",
          type: "invalid_request_error",
          code: "INVALID_REQUEST",
          param: "input",
        },
      });
    },
  },
  {
    id: "responses.x-api-key-accepted",
    areas: ["auth", "responses"],
    transcripts: ["inference/models"],
    rule: "Authentication: x-api-key is accepted on the messages endpoint only",
    description: "/responses (and every other endpoint) also accepts the key as x-api-key.",
    match: (request) =>
      !MESSAGES.test(request.path) &&
      request.headers["x-api-key"] !== undefined &&
      request.headers.authorization === undefined,
    onRequest(request) {
      return withKey(request, request.headers["x-api-key"] as string);
    },
  },

  {
    id: "sse.output-index-shifted",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "Events table: output_index is the item's position in the response's output",
    description: "Every event counts output_index from 1 instead of 0 (consistently).",
    match: postResponses,
    onResponse(response) {
      const indexed = objectsOf((response.events ?? []).map((e) => e.json)).filter(
        (data) => typeof data.output_index === "number",
      );
      if (indexed.length === 0) return;
      for (const data of indexed) data.output_index = Number(data.output_index) + 1;
      return response;
    },
  },
  // ---------------------------------------------------------------- streamed /responses
  {
    id: "sse.done-appended",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "Events: no [DONE] sentinel ends the stream; response.completed does",
    description: "A `data: [DONE]` line is appended after response.completed on /responses.",
    match: postResponses,
    onResponse(response) {
      if (!response.events) return;
      response.events.push({ data: "[DONE]" });
      return response;
    },
  },
  {
    id: "sse.completed-missing",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "Events: response.completed carries the usage and ends the stream",
    description: "The stream ends after response.output_item.done, with no response.completed.",
    match: postResponses,
    onResponse(response) {
      if (!response.events || !completed(response.events)) return;
      response.events = response.events.filter((e) => e.event !== "response.completed");
      return response;
    },
  },
  {
    id: "sse.event-name-mismatch",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "Events: the data object carries type equal to the event name",
    description:
      "The output_text.done event is sent under the name response.output_text.completed (data.type unchanged).",
    match: postResponses,
    onResponse(response) {
      const event = response.events?.find((e) => e.event === "response.output_text.done");
      if (!event) return;
      event.event = "response.output_text.completed";
      return response;
    },
  },
  {
    id: "sse.sequence-number-repeated",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "Stream rules: sequence_number increases (0, 1, 2, …) on every event",
    description: "The second delta repeats the sequence_number of the event before it.",
    match: postResponses,
    onResponse(response) {
      const events = response.events;
      if (!events) return;
      const deltas = events.map((e, i) => (e.event === "response.output_text.delta" ? i : -1)).filter((i) => i > 0);
      const at = deltas[1] ?? deltas[0];
      if (at === undefined) return;
      const target = objectAt(events[at]?.json);
      if (!target) return;
      target.sequence_number = valueAt(events[at - 1]?.json, "sequence_number");
      return response;
    },
  },
  {
    id: "sse.item-added-late",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "Events table: output_item.added comes before the item's deltas",
    description: "response.output_item.added is sent after the first text delta (sequence numbers renumbered).",
    match: postResponses,
    onResponse(response) {
      const events = response.events;
      if (!events) return;
      const added = indexOfEvent(events, "response.output_item.added");
      const firstDelta = indexOfEvent(events, "response.output_text.delta");
      if (added < 0 || firstDelta < added) return;
      const [item] = events.splice(added, 1);
      events.splice(firstDelta, 0, item as SseEvent);
      renumber(events);
      return response;
    },
  },
  {
    id: "sse.done-events-swapped",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "Events table: output_text.done comes before output_item.done",
    description: "response.output_item.done is sent before response.output_text.done (renumbered).",
    match: postResponses,
    onResponse(response) {
      const events = response.events;
      if (!events) return;
      const text = indexOfEvent(events, "response.output_text.done");
      const item = indexOfEvent(events, "response.output_item.done");
      if (text < 0 || item < text) return;
      const [moved] = events.splice(item, 1);
      events.splice(text, 0, moved as SseEvent);
      renumber(events);
      return response;
    },
  },
  {
    id: "sse.delta-dropped",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "Stream rules: the deltas concatenate to the done text",
    description: "One text delta (not the first) is dropped; sequence numbers renumbered.",
    match: postResponses,
    onResponse(response) {
      const events = response.events;
      if (!events) return;
      const deltas = events
        .map((e, i) => (e.event === "response.output_text.delta" && valueAt(e.json, "delta") ? i : -1))
        .filter((i) => i >= 0);
      const at = deltas[1] ?? deltas[0];
      if (at === undefined) return;
      events.splice(at, 1);
      renumber(events);
      return response;
    },
  },
  {
    id: "sse.delta-duplicated",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "Stream rules: the deltas concatenate to the done text",
    description: "One text delta is sent twice (a retried write); sequence numbers renumbered.",
    match: postResponses,
    onResponse(response) {
      const events = response.events;
      if (!events) return;
      const at = events.findIndex((e) => e.event === "response.output_text.delta" && valueAt(e.json, "delta"));
      if (at < 0) return;
      events.splice(at + 1, 0, clone(events[at] as SseEvent));
      renumber(events);
      return response;
    },
  },
  {
    id: "sse.delta-mangled",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "Stream rules: the deltas concatenate to the done text",
    description: "One delta's text is altered (a multi-byte split gone wrong: a replacement character appended).",
    match: postResponses,
    onResponse(response) {
      const event = response.events?.find((e) => e.event === "response.output_text.delta" && valueAt(e.json, "delta"));
      const data = objectAt(event?.json);
      if (!data) return;
      data.delta = `${String(data.delta)}\uFFFD`;
      return response;
    },
  },
  {
    id: "sse.usage-arithmetic",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "Stream rules: response.completed carries usage with total = input + output",
    description: "response.completed's usage has total_tokens = output_tokens (input forgotten).",
    match: postResponses,
    onResponse(response) {
      const usage = response.events ? objectAt(completed(response.events)?.json, "response", "usage") : undefined;
      if (!usage || usage.input_tokens === 0) return;
      usage.total_tokens = usage.output_tokens;
      return response;
    },
  },
  {
    id: "sse.created-not-in-progress",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "Events table / Response status: the first event shows status in_progress",
    description: "response.created reports status completed.",
    match: postResponses,
    onResponse(response) {
      const created = objectAt(response.events?.find((e) => e.event === "response.created")?.json, "response");
      if (!created) return;
      created.status = "completed";
      return response;
    },
  },
  {
    id: "sse.item-id-changes",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "Stream rules: item ids are consistent across the events of an item",
    description: "response.output_item.done carries a different item id from response.output_item.added.",
    match: postResponses,
    onResponse(response) {
      const item = objectAt(response.events?.find((e) => e.event === "response.output_item.done")?.json, "item");
      if (!item?.id) return;
      item.id = `msg_${randomBytes(12).toString("hex")}`;
      return response;
    },
  },
  {
    id: "sse.event-after-completed",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "Events: response.completed ends the stream",
    description: "A stray output_text.done is sent after response.completed (numbered on).",
    match: postResponses,
    onResponse(response) {
      const events = response.events;
      const done = events?.find((e) => e.event === "response.output_text.done");
      if (!events || !done || !completed(events)) return;
      events.push(clone(done));
      renumber(events);
      return response;
    },
  },
  {
    id: "sse.incomplete-reported-completed",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "Response status: a streamed response stopped by max_output_tokens ends with status incomplete",
    description:
      "In a stream cut by max_output_tokens, response.completed says status completed and drops incomplete_details.",
    match: postResponses,
    onResponse(response) {
      const final = response.events ? objectAt(completed(response.events)?.json, "response") : undefined;
      if (!final || final.status !== "incomplete") return;
      final.status = "completed";
      delete final.incomplete_details;
      return response;
    },
  },
  {
    id: "sse.error-event-dropped",
    areas: ["upstream"],
    transcripts: ["upstream/blocked-output"],
    target: "upstream",
    rule: "Errors rule 4: a failure part-way through a stream is reported as an error event",
    description: "A stream that fails part-way is simply closed: the error event is not sent.",
    match: postResponses,
    onResponse(response) {
      if (!response.events?.some((e) => e.event === "error")) return;
      response.events = response.events.filter((e) => e.event !== "error");
      return response;
    },
  },
  {
    id: "sse.cut-stream-reported-completed",
    areas: ["upstream"],
    transcripts: ["upstream/blocked-output"],
    target: "upstream",
    rule: "Errors rule 4: a failure part-way through a stream is reported as an error event (not as a finished answer)",
    description:
      "A stream whose upstream fails part-way ends with response.completed (status completed, the text so far) instead of an error event.",
    match: postResponses,
    onResponse(response) {
      const events = response.events;
      const error = events?.findIndex((e) => e.event === "error") ?? -1;
      const created = objectAt(events?.find((e) => e.event === "response.created")?.json, "response");
      if (!events || error < 0 || !created) return;
      const text = events
        .filter((e) => e.event === "response.output_text.delta")
        .map((e) => valueAt(e.json, "delta") ?? "")
        .join("");
      const item = objectAt(events.find((e) => e.event === "response.output_item.added")?.json, "item");
      const output = item
        ? [{ ...item, status: "completed", content: [{ type: "output_text", text, annotations: [], logprobs: [] }] }]
        : [];
      const outputTokens = events.filter((e) => e.event === "response.output_text.delta").length;
      const usage = {
        ...objectAt(created, "usage"),
        input_tokens: 1,
        output_tokens: outputTokens,
        total_tokens: 1 + outputTokens,
      };
      const final = { ...created, status: "completed", completed_at: Math.floor(Date.now() / 1000), output, usage };
      events.splice(error, 1, {
        event: "response.completed",
        data: "{}",
        json: {
          type: "response.completed",
          response: final,
          sequence_number: valueAt(events[error]?.json, "sequence_number") ?? error,
        },
      });
      return response;
    },
  },
  {
    id: "sse.usage-differs-from-plain",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "Events: the last data event carries the usage of the call, streamed or not (the same call gives the same usage)",
    description: "response.completed counts one output token more than the call produced (the sum still adds up).",
    match: postResponses,
    onResponse(response) {
      const usage = response.events ? objectAt(completed(response.events)?.json, "response", "usage") : undefined;
      if (!usage) return;
      usage.output_tokens = Number(usage.output_tokens) + 1;
      usage.total_tokens = Number(usage.total_tokens) + 1;
      return response;
    },
  },
  {
    id: "sse.content-type-not-event-stream",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "Events: a streamed responses call answers content type text/event-stream",
    description: "The stream's bytes are right but its content type is text/plain.",
    match: postResponses,
    onResponse(response) {
      if (!response.events) return;
      response.headers["content-type"] = "text/plain; charset=utf-8";
      return response;
    },
  },
  {
    id: "sse.buffered-as-json",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "Endpoints 1: with stream true the answer is a text/event-stream",
    description: "stream:true is ignored: the whole response comes back as one JSON object.",
    match: postResponses,
    onRequest(request) {
      const json = objectAt(request.json);
      if (json?.stream !== true) return;
      json.stream = false;
      return request;
    },
  },

  // ---------------------------------------------------------------- other inference endpoints
  {
    id: "chat.done-removed",
    areas: ["inference"],
    transcripts: ["inference/completions"],
    rule: "Decisions (chat completions): OpenAI wire format, streams end with data: [DONE]",
    description: "The chat completions stream ends without its data: [DONE] line.",
    match: (request) => is(request, "POST", CHAT) || is(request, "POST", /\/completions$/),
    onResponse(response) {
      if (!response.events?.some((e) => e.data === "[DONE]")) return;
      response.events = response.events.filter((e) => e.data !== "[DONE]");
      return response;
    },
  },
  {
    id: "chat.usage-arithmetic",
    areas: ["inference"],
    transcripts: ["inference/chat-completions"],
    rule: "Decisions (chat completions): OpenAI wire format; usage total_tokens = prompt + completion",
    description: "A chat completion's usage.total_tokens is prompt_tokens only.",
    match: (request) => is(request, "POST", CHAT),
    onResponse(response) {
      const usage = objectAt(response.json, "usage");
      if (response.status !== 200 || !usage || usage.completion_tokens === 0) return;
      usage.total_tokens = usage.prompt_tokens;
      return response;
    },
  },
  {
    id: "messages.error-untyped",
    areas: ["inference"],
    transcripts: ["inference/messages"],
    rule: 'Decisions (messages): errors keep the envelope and also carry top-level "type": "error"',
    description: "Errors of the messages endpoint lack the top-level type the other vendor's SDK reads.",
    match: (request) => MESSAGES.test(request.path),
    onResponse(response) {
      const json = objectAt(response.json);
      if (response.status < 400 || json?.type !== "error") return;
      delete json.type;
      return response;
    },
  },
  {
    id: "models.other-accounts-models-listed",
    areas: ["auth", "inference", "finetune"],
    transcripts: ["auth/other-account-resources"],
    rule: "Endpoints 2: GET /models lists the models this key can call (not another account's)",
    description: "The model list includes the fine-tuned models of every account.",
    match: (request) => is(request, "GET", /\/models$/),
    async onResponse(response, request, ctx) {
      const models = listAt(response.json, "data");
      if (response.status !== 200 || !models) return;
      const own = ctx.keyOf(request);
      const seen = new Set(models.map((m) => valueAt(m, "id")));
      for (const key of Object.values(ctx.keys())) {
        if (key === own) continue;
        const theirs = await resend(ctx, withKey(request, key));
        for (const model of objectsOf(listAt(theirs.json, "data"))) {
          if (seen.has(model.id) || !String(model.id).startsWith("accounts/")) continue;
          seen.add(model.id);
          models.push(model);
        }
      }
      return response;
    },
  },
  {
    id: "chat.stream-id-changes",
    areas: ["inference"],
    transcripts: ["inference/chat-completions-stream"],
    rule: "Decisions (chat completions): OpenAI wire format; every chunk of a stream carries the completion's one id",
    description: "Each chunk of a chat completions stream carries a new id.",
    match: (request) => is(request, "POST", CHAT),
    onResponse(response) {
      const chunks = objectsOf((response.events ?? []).map((e) => e.json)).filter((c) => typeof c.id === "string");
      if (chunks.length < 2) return;
      for (const chunk of chunks) chunk.id = `chatcmpl_${randomBytes(12).toString("hex")}`;
      return response;
    },
  },
  {
    id: "messages.stream-stop-early",
    areas: ["inference"],
    transcripts: ["inference/messages-stream"],
    rule: "Decisions (messages): the vendor's stream order (…, content_block_stop, message_delta, message_stop)",
    description: "message_stop is sent before message_delta.",
    match: (request) => MESSAGES.test(request.path),
    onResponse(response) {
      const events = response.events;
      const delta = events?.findIndex((e) => e.event === "message_delta") ?? -1;
      const stop = events?.findIndex((e) => e.event === "message_stop") ?? -1;
      if (!events || delta < 0 || stop < delta) return;
      const [moved] = events.splice(stop, 1);
      events.splice(delta, 0, moved as SseEvent);
      return response;
    },
  },
  {
    id: "messages.x-api-key-rejected",
    areas: ["auth", "inference"],
    transcripts: ["inference/messages-stream"],
    rule: "Authentication: on the messages endpoint, x-api-key is accepted instead of Bearer",
    description: "The messages endpoint ignores x-api-key and answers 401 INVALID_API_KEY.",
    match: (request) => MESSAGES.test(request.path) && request.headers["x-api-key"] !== undefined,
    onRequest(request) {
      delete request.headers["x-api-key"];
      return request;
    },
  },
  {
    id: "models.unknown-model-found",
    areas: ["inference"],
    transcripts: ["inference/models"],
    rule: "Endpoints 2 / Errors: GET /models/{model} of an unknown model is 404 MODEL_NOT_FOUND",
    description: "GET /models/{model} answers 200 with a made-up model for any id.",
    match: (request) => is(request, "GET", MODEL_GET),
    onResponse(response, request) {
      if (response.status !== 404) return;
      const id = decodeURIComponent(request.path.match(MODEL_GET)?.[1] ?? "");
      return replace(response, 200, { id, object: "model", created: 1767225600, owned_by: "maas" });
    },
  },

  // ---------------------------------------------------------------- authentication and accounts
  {
    id: "auth.path-account-not-checked",
    areas: ["auth", "finetune", "datasets"],
    transcripts: ["auth/other-account-path"],
    rule: "Authentication: a key reaches the account it belongs to and no other",
    description: "The {account} path segment is trusted: a key reads (and writes) another account's jobs and datasets.",
    match: (request) => ACCOUNT_PATH.test(request.path),
    onRequest(request, ctx) {
      const account = request.path.match(ACCOUNT_PATH)?.[1] as string;
      const own = ctx.accountOfKey(ctx.keyOf(request));
      const theirs = ctx.keyOfAccount(account);
      if (own === undefined || own === account || theirs === undefined) return;
      return withKey(request, theirs);
    },
  },
  {
    id: "auth.foreign-job-by-id",
    areas: ["auth", "finetune"],
    transcripts: ["auth/other-account-resources"],
    rule: "Everything is scoped to an account: another account's job id under one's own path is not found",
    description:
      "A job is looked up by id alone: another account's job id under the caller's own path returns that job.",
    match: (request) => request.method === "GET" && JOB_ANY.test(request.path),
    async onResponse(response, request, ctx) {
      if (response.status !== 404) return;
      const [, account, collection, job, suffix = ""] = request.path.match(JOB_ANY) as RegExpMatchArray;
      for (const [other, key] of Object.entries(ctx.keys())) {
        if (other === account) continue;
        const path = request.path.replace(
          `/accounts/${account}/${collection}/${job}${suffix}`,
          `/accounts/${other}/${collection}/${job}${suffix}`,
        );
        const found = await resend(ctx, withKey(request, key), { path });
        if (found.status === 200) return found;
      }
    },
  },
  {
    id: "auth.suspended-tenant-served",
    areas: ["tenant", "auth", "errors"],
    transcripts: ["auth/suspended"],
    rule: "Authentication: a suspended tenant yields TENANT_SUSPENDED (403)",
    description: "Suspension is not enforced on inference: a suspended tenant's call is served.",
    match: inferenceSuccess,
    async onResponse(response, request, ctx) {
      if (errorCode(response) !== "TENANT_SUSPENDED") return;
      for (const key of Object.values(ctx.keys())) {
        const served = await resend(ctx, withKey(request, key));
        if (served.status === 200) return served;
      }
    },
  },
  {
    id: "tenant.allow-list-ignored",
    areas: ["tenant"],
    transcripts: ["tenant/allow-list"],
    rule: "Errors (403): a model outside the account's allow-list is MODEL_NOT_ALLOWED",
    description: "The account's model allow-list is not enforced: the call is served.",
    async onResponse(response, request, ctx) {
      if (errorCode(response) !== "MODEL_NOT_ALLOWED") return;
      for (const key of Object.values(ctx.keys())) {
        const served = await resend(ctx, withKey(request, key));
        if (served.status === 200) return served;
      }
    },
  },
  {
    id: "tenant.agreement-not-enforced",
    areas: ["tenant"],
    transcripts: ["tenant/agreement"],
    rule: "Errors (403): a model whose agreement the account has not accepted is AGREEMENT_REQUIRED",
    description: "Licence agreements are not checked: the call is served.",
    match: inferenceSuccess,
    async onResponse(response, request, ctx) {
      if (errorCode(response) !== "AGREEMENT_REQUIRED") return;
      for (const key of Object.values(ctx.keys())) {
        const served = await resend(ctx, withKey(request, key));
        if (served.status === 200) return served;
      }
    },
  },
  {
    id: "auth.invalid-key-403",
    areas: ["auth", "errors"],
    transcripts: ["inference/models"],
    rule: "Authentication: an invalid key yields INVALID_API_KEY (HTTP 401)",
    description: "An invalid or missing key is answered 403 permission_error (code kept).",
    onResponse(response) {
      const error = errorWithCode(response, "INVALID_API_KEY");
      if (!error) return;
      response.status = 403;
      error.type = "permission_error";
      return response;
    },
  },
  {
    id: "auth.foreign-path-404",
    areas: ["auth"],
    transcripts: ["limits/account-id"],
    rule: "Decisions: a path {account} other than the key's is 403 OPERATION_NOT_ALLOWED, whether or not it exists",
    description: "Another account's path answers 404 NOT_FOUND instead of 403 OPERATION_NOT_ALLOWED.",
    onResponse(response) {
      const json = objectAt(response.json);
      const error = errorWithCode(response, "OPERATION_NOT_ALLOWED");
      if (!json || error?.param !== "account") return;
      response.status = 404;
      json.error = { ...error, type: "not_found_error", code: "NOT_FOUND", param: null };
      return response;
    },
  },

  // ---------------------------------------------------------------- errors
  {
    id: "errors.suspended-code-swapped",
    areas: ["tenant", "errors", "auth"],
    transcripts: ["auth/suspended"],
    rule: "Errors: branch on error.code; a suspended tenant is TENANT_SUSPENDED",
    description: "A suspended tenant gets 403 permission_error with code OPERATION_NOT_ALLOWED (same status and type).",
    onResponse(response) {
      const error = errorWithCode(response, "TENANT_SUSPENDED");
      if (!error) return;
      error.code = "OPERATION_NOT_ALLOWED";
      return response;
    },
  },
  {
    id: "errors.billing-type-wrong",
    areas: ["tenant", "errors"],
    transcripts: ["tenant/payment-required"],
    rule: "Errors: error.type goes with the status (402 is billing_error)",
    description: "402 errors carry error.type invalid_request_error.",
    onResponse(response) {
      const error = objectAt(response.json, "error");
      if (response.status !== 402 || !error) return;
      error.type = "invalid_request_error";
      return response;
    },
  },
  {
    id: "errors.param-path-style",
    areas: ["errors", "responses"],
    transcripts: ["responses/media-fetch-failed"],
    rule: 'Decisions: error.param is a path into the request such as input[2].content (store → "store")',
    description: 'error.param is a JSON pointer ("/body/store") instead of the field path.',
    onResponse(response) {
      const error = objectAt(response.json, "error");
      const param = error?.param;
      if (response.status !== 400 || !error || typeof param !== "string") return;
      error.param = `/body/${param.replace(/\./g, "/")}`;
      return response;
    },
  },
  {
    id: "errors.model-not-found-generic",
    areas: ["errors", "responses"],
    transcripts: ["responses/model-not-found"],
    rule: "Errors (404 on /responses): MODEL_NOT_FOUND",
    description: "An unknown model is 404 with the generic code NOT_FOUND instead of MODEL_NOT_FOUND.",
    onResponse(response) {
      const error = errorWithCode(response, "MODEL_NOT_FOUND");
      if (!error) return;
      error.code = "NOT_FOUND";
      return response;
    },
  },
  {
    id: "errors.budget-code-swapped",
    areas: ["tenant", "limits", "errors"],
    transcripts: ["tenant/budget"],
    rule: "Errors (429): a spent budget is TENANT_BUDGET_EXCEEDED",
    description: "A spent budget is reported as TENANT_RATE_LIMITED (same status, type and Retry-After).",
    onResponse(response) {
      const error = errorWithCode(response, "TENANT_BUDGET_EXCEEDED");
      if (!error) return;
      error.code = "TENANT_RATE_LIMITED";
      return response;
    },
  },
  {
    id: "errors.no-envelope",
    areas: ["errors"],
    transcripts: ["responses/model-not-found"],
    rule: "Errors: envelope {error: {message, type, code, param}}",
    description: "404 errors are sent flat: {message, code} at the top level.",
    onResponse(response) {
      const error = objectAt(response.json, "error");
      if (response.status !== 404 || !error) return;
      const { message, code } = error;
      response.json = { message, code };
      return response;
    },
  },

  // ---------------------------------------------------------------- failures upstream (the misbehaving-upstream server)
  {
    id: "upstream.fallback-reported-primary",
    areas: ["upstream"],
    transcripts: ["upstream/fallback"],
    target: "upstream",
    rule: "Headers: x-provider-class says fallback when a standby served the call",
    description: "x-provider-class always says primary, also when a standby served.",
    match: inferenceSuccess,
    onResponse(response) {
      if (response.headers["x-provider-class"] !== "fallback") return;
      response.headers["x-provider-class"] = "primary";
      return response;
    },
  },
  {
    id: "upstream.timeout-code-swapped",
    areas: ["upstream"],
    transcripts: ["upstream/timeout"],
    target: "upstream",
    rule: "Errors (504): an upstream that does not answer in time is UPSTREAM_TIMEOUT",
    description: "An upstream timeout is reported as REQUEST_DEADLINE_EXCEEDED (same status and type).",
    onResponse(response) {
      const error = errorWithCode(response, "UPSTREAM_TIMEOUT");
      if (!error) return;
      error.code = "REQUEST_DEADLINE_EXCEEDED";
      return response;
    },
  },
  {
    id: "upstream.content-rejection-as-blocked-input",
    areas: ["upstream"],
    transcripts: ["upstream/content-rejected"],
    target: "upstream",
    rule: "Errors (400): a refusal by the upstream provider is UPSTREAM_CONTENT_REJECTED",
    description: "The upstream's content refusal is reported as the service's own CONTENT_BLOCKED_INPUT.",
    onResponse(response) {
      const error = errorWithCode(response, "UPSTREAM_CONTENT_REJECTED");
      if (!error) return;
      error.code = "CONTENT_BLOCKED_INPUT";
      return response;
    },
  },
  {
    id: "upstream.internal-error-leaks",
    areas: ["upstream"],
    transcripts: ["upstream/internal"],
    target: "upstream",
    rule: "Decisions: INTERNAL (500) leaks nothing internal into the message",
    description: "A 500's message carries the exception and its stack frame.",
    onResponse(response) {
      const error = errorWithCode(response, "INTERNAL");
      if (!error) return;
      error.message = `Error: provider failed\n    at generate (/srv/app/server/inference/engine.ts:212:11)`;
      return response;
    },
  },

  // ---------------------------------------------------------------- limits
  {
    id: "limits.rate-limit-not-enforced",
    areas: ["tenant", "limits"],
    transcripts: ["tenant/rate-limit"],
    rule: "Errors (429): TENANT_RATE_LIMITED when the account's requests per minute are spent",
    description: "The per-account rate limit is not enforced: the over-limit call is served.",
    async onResponse(response, request, ctx) {
      if (errorCode(response) !== "TENANT_RATE_LIMITED" || ACCOUNT_PATH.test(request.path)) return;
      for (const key of Object.values(ctx.keys())) {
        const served = await resend(ctx, withKey(request, key));
        if (served.status < 400) return served;
      }
    },
  },
  {
    id: "limits.temperature-over-max-clamped",
    areas: ["limits", "responses"],
    transcripts: ["limits/temperature"],
    rule: "Limits: temperature 0 to 2 (above is rejected)",
    description: "temperature above 2 is clamped to 2 instead of rejected.",
    match: inferenceSuccess,
    onRequest(request) {
      const json = objectAt(request.json);
      if (typeof json?.temperature !== "number" || json.temperature <= 2) return;
      json.temperature = 2;
      return request;
    },
  },
  {
    id: "limits.temperature-max-rejected",
    areas: ["limits", "responses"],
    transcripts: ["limits/temperature"],
    rule: "Limits: temperature 0 to 2 (2 itself is allowed)",
    description: "temperature exactly 2 is rejected (an exclusive bound).",
    match: postResponses,
    respond(request) {
      if (valueAt(request.json, "temperature") !== 2) return;
      return jsonResponse(400, {
        error: {
          message: "temperature must be below 2.",
          type: "invalid_request_error",
          code: "INVALID_REQUEST",
          param: "temperature",
        },
      });
    },
  },
  {
    id: "limits.top-p-over-max-clamped",
    areas: ["limits", "responses"],
    transcripts: ["limits/top-p"],
    rule: "Limits: top_p 0 to 1",
    description: "top_p above 1 is clamped to 1 instead of rejected.",
    match: inferenceSuccess,
    onRequest(request) {
      const json = objectAt(request.json);
      if (typeof json?.top_p !== "number" || json.top_p <= 1) return;
      json.top_p = 1;
      return request;
    },
  },
  {
    id: "limits.max-output-tokens-zero-accepted",
    areas: ["limits", "responses"],
    transcripts: ["limits/max-output-tokens"],
    rule: "Limits: max_output_tokens at least 1",
    description: "max_output_tokens 0 (or below) is taken as 1 instead of rejected.",
    match: postResponses,
    onRequest(request) {
      const json = objectAt(request.json);
      if (typeof json?.max_output_tokens !== "number" || json.max_output_tokens >= 1) return;
      json.max_output_tokens = 1;
      return request;
    },
  },
  {
    id: "limits.page-size-over-max-clamped",
    areas: ["limits", "finetune", "datasets"],
    transcripts: ["limits/page-size"],
    rule: "Limits: list page size 1 to 200 (201 is rejected)",
    description: "A pageSize above 200 is clamped to 200 instead of rejected.",
    match: (request) => is(request, "GET", LIST),
    onRequest(request) {
      const size = Number(request.query.get("pageSize"));
      if (!(size > 200)) return;
      request.query.set("pageSize", "200");
      return request;
    },
  },
  {
    id: "limits.idempotency-key-over-max-truncated",
    areas: ["limits", "finetune"],
    transcripts: ["limits/idempotency-key"],
    rule: "Limits: Idempotency-Key at most 255 characters",
    description: "An Idempotency-Key over 255 characters is truncated instead of rejected.",
    match: (request) => is(request, "POST", JOB_COLLECTION),
    onRequest(request) {
      const key = request.headers["idempotency-key"];
      if (key === undefined || key.length <= 255) return;
      request.headers["idempotency-key"] = key.slice(0, 255);
      return request;
    },
  },
  {
    id: "limits.max-points-over-max-clamped",
    areas: ["limits", "finetune"],
    transcripts: ["limits/max-points"],
    rule: "Limits: maxPoints 0 to 10000",
    description: "maxPoints above 10000 is clamped instead of rejected.",
    match: (request) => is(request, "GET", METRICS),
    onRequest(request) {
      if (!(Number(request.query.get("maxPoints")) > 10000)) return;
      request.query.set("maxPoints", "10000");
      return request;
    },
  },
  {
    id: "limits.epochs-over-max-clamped",
    areas: ["limits", "finetune"],
    transcripts: ["limits/epochs"],
    rule: "Limits: epochs 1 to 100",
    description: "config.epochs above 100 is clamped to 100 instead of rejected.",
    match: (request) => request.method === "POST" && (ESTIMATE.test(request.path) || JOB_COLLECTION.test(request.path)),
    onRequest(request) {
      const config = objectAt(request.json, "config");
      if (!config || !(Number(config.epochs) > 100)) return;
      config.epochs = 100;
      return request;
    },
  },
  {
    id: "limits.carveout-max-accepted",
    areas: ["limits", "finetune"],
    transcripts: ["limits/eval-carveout"],
    rule: "Limits: evalAutoCarveoutBasisPoints 0 to 9999",
    description: "evalAutoCarveoutBasisPoints of 10000 or more is taken as 9999 instead of rejected.",
    match: (request) => request.method === "POST" && (ESTIMATE.test(request.path) || JOB_COLLECTION.test(request.path)),
    onRequest(request) {
      const config = objectAt(request.json, "config");
      if (!config || !(Number(config.evalAutoCarveoutBasisPoints) > 9999)) return;
      config.evalAutoCarveoutBasisPoints = 9999;
      return request;
    },
  },
  {
    id: "limits.display-name-truncated",
    areas: ["limits", "datasets"],
    transcripts: ["limits/display-name"],
    rule: "Decisions: displayName is at most 256 characters",
    description: "A displayName over 256 characters is cut to 256 instead of rejected.",
    match: (request) => is(request, "POST", DATASETS),
    onRequest(request) {
      const dataset = objectAt(request.json, "dataset");
      const name = dataset?.displayName;
      if (!dataset || typeof name !== "string" || name.length <= 256) return;
      dataset.displayName = name.slice(0, 256);
      return request;
    },
  },
  {
    id: "limits.long-id-not-found",
    areas: ["limits", "finetune", "datasets"],
    transcripts: ["limits/dataset-id"],
    rule: "Limits: job and dataset ids at most 64 characters (a longer one is an invalid request, not a missing resource)",
    description: "A path id over 64 characters answers 404 NOT_FOUND instead of 400 INVALID_REQUEST.",
    match: (request) => request.method === "GET" && (JOB.test(request.path) || DATASET.test(request.path)),
    onResponse(response, request) {
      const id = (request.path.match(JOB) ?? request.path.match(DATASET))?.at(-1) ?? "";
      if (decodeURIComponent(id).length <= 64 || response.status !== 400) return;
      return replace(response, 404, {
        error: { message: "Not found.", type: "not_found_error", code: "NOT_FOUND", param: null },
      });
    },
  },

  // ---------------------------------------------------------------- fine-tuning jobs
  {
    id: "jobs.create-200",
    areas: ["finetune"],
    transcripts: ["limits/idempotency-key"],
    rule: "Endpoints 4: create answers HTTP 201 with the training job",
    description: "Job creation answers 200 instead of 201.",
    match: (request) => is(request, "POST", JOB_COLLECTION),
    onResponse(response) {
      if (response.status !== 201) return;
      response.status = 200;
      return response;
    },
  },
  {
    id: "jobs.create-not-queued",
    areas: ["finetune"],
    transcripts: ["limits/idempotency-key"],
    rule: "States: create → JOB_STATE_QUEUED (the job is accepted, not started)",
    description: "The created job is reported RUNNING, with a startTime, in the create answer.",
    match: (request) => is(request, "POST", JOB_COLLECTION),
    onResponse(response) {
      const job = objectAt(response.json);
      if (response.status !== 201 || job?.state !== "JOB_STATE_QUEUED") return;
      job.state = "JOB_STATE_RUNNING";
      job.startTime = job.createTime;
      return response;
    },
  },
  {
    id: "jobs.idempotency-key-ignored",
    areas: ["finetune"],
    transcripts: ["limits/idempotency-key"],
    rule: "Endpoints 4: a repeated request with the same Idempotency-Key returns the first job",
    description: "Idempotency-Key is ignored: a retried create starts a second job with a new name.",
    match: (request) => is(request, "POST", JOB_COLLECTION),
    onRequest(request) {
      const key = request.headers["idempotency-key"];
      if (key === undefined) return;
      delete request.headers["idempotency-key"];
      STRIPPED_KEYS.add(request);
      return request;
    },
    async onResponse(response, request, ctx) {
      // The retry of a create whose first job still lives clashes on the output model id
      // (409 ALREADY_EXISTS) in the correct server; the implementation under test would
      // have made a second job, so make one under a fresh model id and show the one asked for.
      const wanted = stringAt(request.json, "config", "outputModelId");
      if (!STRIPPED_KEYS.has(request) || errorCode(response) !== "ALREADY_EXISTS" || !wanted) return;
      const json = structuredClone(objectAt(request.json) ?? {});
      json.config = {
        ...objectAt(json, "config"),
        outputModelId: `${wanted.slice(0, 50)}-${randomBytes(4).toString("hex")}`,
      };
      const second = await resend(ctx, request, { json });
      const secondConfig = objectAt(second.json, "config");
      if (second.status !== 201 || !secondConfig) return;
      secondConfig.outputModelId = wanted;
      return replace(second, 201, second.json);
    },
  },
  {
    id: "jobs.idempotency-conflict-ignored",
    areas: ["finetune"],
    transcripts: ["finetune/idempotency"],
    rule: "Decisions: same Idempotency-Key with a different body → 409 IDEMPOTENCY_CONFLICT",
    description: "A reused Idempotency-Key with a different body returns the first job (201) instead of 409.",
    match: (request) => is(request, "POST", JOB_COLLECTION),
    onResponse(response, request, ctx) {
      const key = request.headers["idempotency-key"];
      if (key === undefined) return;
      const slot = `idem:${request.path}:${key}`;
      if (response.status === 201 && !ctx.state.has(slot)) ctx.state.set(slot, response.json);
      if (errorCode(response) !== "IDEMPOTENCY_CONFLICT" || !ctx.state.has(slot)) return;
      return replace(response, 201, ctx.state.get(slot));
    },
  },
  {
    id: "jobs.wrong-collection-found",
    areas: ["finetune"],
    transcripts: ["finetune/collections"],
    rule: "A job is found only through the collection of its own type",
    description: "An SFT job is returned under dpoJobs (and back): the collection is not checked.",
    match: (request) => JOB_ANY.test(request.path),
    async onResponse(response, request, ctx) {
      if (response.status !== 404) return;
      const [, , collection] = request.path.match(JOB_ANY) as RegExpMatchArray;
      const other = collection === "dpoJobs" ? "supervisedFineTuningJobs" : "dpoJobs";
      const found = await resend(ctx, request, { path: request.path.replace(`/${collection}/`, `/${other}/`) });
      if (found.status >= 400) return;
      return found;
    },
  },
  {
    id: "jobs.cancel-invalid-state-200",
    areas: ["finetune"],
    transcripts: ["finetune/cancel-running-sft"],
    rule: "Endpoints 7 / States: cancel in any other state than queued or running → JOB_STATE_INVALID, job unchanged",
    description: "Cancelling a finished job answers 200 with the (unchanged) job.",
    match: (request) => is(request, "POST", JOB_CANCEL),
    async onResponse(response, request, ctx) {
      if (errorCode(response) !== "JOB_STATE_INVALID") return;
      const job = await resend(ctx, request, {
        method: "GET",
        path: request.path.replace(/:cancel$/, ""),
        body: Buffer.alloc(0),
        json: undefined,
      });
      if (job.status !== 200) return;
      return replace(response, 200, job.json);
    },
  },
  {
    id: "jobs.cancel-state-invalid-as-400",
    areas: ["finetune", "errors"],
    transcripts: ["finetune/cancel-running-sft"],
    rule: "Decisions: JOB_STATE_INVALID is HTTP 409",
    description: "JOB_STATE_INVALID comes with HTTP 400 (code and type unchanged).",
    onResponse(response) {
      if (errorCode(response) !== "JOB_STATE_INVALID") return;
      response.status = 400;
      return response;
    },
  },
  {
    id: "jobs.cancel-without-complete-time",
    areas: ["finetune"],
    transcripts: ["finetune/cancel-running"],
    rule: "Endpoints 7 / States: cancel → JOB_STATE_CANCELLED with completeTime set",
    description: "The cancel answer has state CANCELLED but no completeTime.",
    match: (request) => is(request, "POST", JOB_CANCEL),
    onResponse(response) {
      const job = objectAt(response.json);
      if (response.status !== 200 || job?.completeTime === undefined) return;
      delete job.completeTime;
      return response;
    },
  },
  {
    id: "jobs.stale-after-cancel",
    areas: ["finetune"],
    transcripts: ["finetune/cancel-running"],
    rule: "States: QUEUED/RUNNING → cancel → JOB_STATE_CANCELLED (reads after the cancel show it)",
    description:
      "A stale read cache: after a successful cancel, GET still returns the job as it was before the cancel.",
    match: (request) => is(request, "POST", JOB_CANCEL) || is(request, "GET", JOB),
    async onRequest(request, ctx) {
      if (request.method !== "POST") return;
      const before = await resend(ctx, request, {
        method: "GET",
        path: request.path.replace(/:cancel$/, ""),
        body: Buffer.alloc(0),
        json: undefined,
      });
      if (before.status === 200) ctx.state.set(`pending:${request.path.replace(/:cancel$/, "")}`, before.json);
    },
    onResponse(response, request, ctx) {
      if (request.method === "POST") {
        const path = request.path.replace(/:cancel$/, "");
        if (response.status === 200) ctx.state.set(`stale:${path}`, ctx.state.get(`pending:${path}`));
        return;
      }
      const stale = ctx.state.get(`stale:${request.path}`);
      if (response.status !== 200 || stale === undefined) return;
      return replace(response, 200, stale);
    },
  },
  {
    id: "jobs.stuck-queued",
    areas: ["finetune"],
    transcripts: ["finetune/cancel-running"],
    rule: "States: QUEUED → training starts → RUNNING → SUCCEEDED (the job must progress)",
    description: "Reads of a job always show it QUEUED: the state is never updated.",
    match: (request) => is(request, "GET", JOB),
    onResponse(response) {
      const job = objectAt(response.json);
      if (
        response.status !== 200 ||
        !job?.state ||
        job.state === "JOB_STATE_QUEUED" ||
        job.state === "JOB_STATE_CANCELLED"
      )
        return;
      job.state = "JOB_STATE_QUEUED";
      for (const field of ["startTime", "completeTime", "outputModel", "stateDetail", "errorClass"]) delete job[field];
      job.progress = { ...objectAt(job, "progress"), percent: 0, epoch: 0, processedTokens: "0" };
      return response;
    },
  },
  {
    id: "jobs.succeeded-without-output-model",
    areas: ["finetune"],
    transcripts: ["finetune/dpo"],
    rule: "States: RUNNING → SUCCEEDED, outputModel names the new model in the account",
    description: "A SUCCEEDED job does not name its outputModel.",
    onResponse(response) {
      const jobs = jobsOf(response).filter(
        (job) => job.state === "JOB_STATE_SUCCEEDED" && job.outputModel !== undefined,
      );
      if (jobs.length === 0) return;
      for (const job of jobs) delete job.outputModel;
      return response;
    },
  },
  {
    id: "jobs.output-model-other-account",
    areas: ["finetune"],
    transcripts: ["finetune/dpo"],
    rule: "States: outputModel names the new model in the job's own account",
    description: "outputModel is named under the platform account (accounts/maas/models/…) instead of the caller's.",
    onResponse(response) {
      const jobs = jobsOf(response).filter((job) => typeof job.outputModel === "string");
      if (jobs.length === 0) return;
      for (const job of jobs) job.outputModel = String(job.outputModel).replace(/^accounts\/[^/]+\//, "accounts/maas/");
      return response;
    },
  },
  {
    id: "jobs.started-without-start-time",
    areas: ["finetune"],
    transcripts: ["finetune/cancel-running"],
    rule: "States: QUEUED → RUNNING sets startTime",
    description: "Jobs past QUEUED never get a startTime.",
    onResponse(response) {
      const jobs = jobsOf(response).filter((job) => job.startTime !== undefined);
      if (jobs.length === 0) return;
      for (const job of jobs) delete job.startTime;
      return response;
    },
  },
  {
    id: "jobs.created-by-is-the-key",
    areas: ["finetune"],
    transcripts: ["finetune/cancel-succeeded"],
    rule: "Decisions: createdBy names the key's id (keys/{keyId}), never the key itself",
    description: "createdBy carries the API key that created the job.",
    onResponse(response, request, ctx) {
      const key = ctx.keyOf(request);
      const jobs = jobsOf(response).filter((job) => typeof job.createdBy === "string");
      if (jobs.length === 0 || key === undefined) return;
      for (const job of jobs) job.createdBy = `keys/${key}`;
      return response;
    },
  },
  {
    id: "jobs.collections-mixed",
    areas: ["finetune"],
    transcripts: ["finetune/collections"],
    rule: "Endpoints 5: the SFT list holds SFT jobs; DPO jobs are listed under dpoJobs",
    description: "The supervisedFineTuningJobs list also holds the account's DPO jobs.",
    match: (request) => is(request, "GET", /\/supervisedFineTuningJobs$/),
    async onResponse(response, request, ctx) {
      const items = listAt(response.json, "supervisedFineTuningJobs");
      if (response.status !== 200 || !items) return;
      const dpo = await resend(ctx, request, { path: request.path.replace(/supervisedFineTuningJobs$/, "dpoJobs") });
      const extra = listAt(dpo.json, "dpoJobs") ?? [];
      if (extra.length === 0) return;
      items.push(...extra);
      return response;
    },
  },
  {
    id: "jobs.total-epochs-not-config",
    areas: ["finetune"],
    transcripts: ["finetune/cancel-succeeded"],
    rule: "Training job: progress.totalEpochs is the job's epochs",
    description: "progress.totalEpochs is always 1, whatever config.epochs says.",
    onResponse(response) {
      const progresses = objectsOf(jobsOf(response).map((job) => job.progress)).filter(
        (progress) => progress.totalEpochs !== 1,
      );
      if (progresses.length === 0) return;
      for (const progress of progresses) progress.totalEpochs = 1;
      return response;
    },
  },
  {
    id: "jobs.succeeded-without-complete-time",
    areas: ["finetune"],
    transcripts: ["finetune/cancel-succeeded"],
    rule: "Decisions: a job that SUCCEEDED has its completeTime",
    description: "SUCCEEDED jobs lack completeTime.",
    onResponse(response) {
      const jobs = jobsOf(response).filter(
        (job) => job.state === "JOB_STATE_SUCCEEDED" && job.completeTime !== undefined,
      );
      if (jobs.length === 0) return;
      for (const job of jobs) delete job.completeTime;
      return response;
    },
  },
  {
    id: "jobs.complete-before-start",
    areas: ["finetune"],
    transcripts: ["finetune/cancel-succeeded"],
    rule: "Training job: createTime ≤ startTime ≤ completeTime",
    description: "completeTime is a second before startTime (a clock from another host).",
    onResponse(response) {
      const jobs = jobsOf(response).filter((job) => job.completeTime !== undefined && job.startTime !== undefined);
      if (jobs.length === 0) return;
      for (const job of jobs) job.completeTime = new Date(Date.parse(String(job.startTime)) - 1000).toISOString();
      return response;
    },
  },
  {
    id: "jobs.base-model-wrong",
    areas: ["finetune"],
    rule: "Training job: baseModel is the full resource name of the model being tuned",
    description: "The job names another base model than the one it tunes (accounts/maas/models/tiny-reasoner-v0).",
    onResponse(response) {
      const jobs = jobsOf(response).filter((job) => typeof job.baseModel === "string");
      if (jobs.length === 0) return;
      for (const job of jobs) job.baseModel = "accounts/maas/models/tiny-reasoner-v0";
      return response;
    },
  },
  {
    id: "jobs.evaluation-dataset-dropped",
    areas: ["finetune"],
    transcripts: ["finetune/evaluation"],
    rule: "Endpoints 4: evaluationDatasetVersion is used as held-out data (the job names it)",
    description: "Jobs never name their evaluationDatasetVersion.",
    onResponse(response) {
      const jobs = jobsOf(response).filter((job) => job.evaluationDatasetVersion !== undefined);
      if (jobs.length === 0) return;
      for (const job of jobs) delete job.evaluationDatasetVersion;
      return response;
    },
  },
  {
    id: "jobs.int64-as-number",
    areas: ["finetune"],
    transcripts: ["limits/page-size"],
    rule: "Training job: progress.processedTokens is a 64-bit integer carried as a string",
    description: "progress.processedTokens is a JSON number.",
    onResponse(response) {
      const progresses = objectsOf(jobsOf(response).map((job) => job.progress)).filter((progress) =>
        isInt64String(progress.processedTokens),
      );
      if (progresses.length === 0) return;
      for (const progress of progresses) progress.processedTokens = Number(progress.processedTokens);
      return response;
    },
  },
  {
    id: "jobs.undeclared-field",
    areas: ["finetune"],
    transcripts: ["limits/page-size"],
    rule: "Contract: response objects are closed; no undeclared fields",
    description: 'Every job carries an extra field ("priority").',
    onResponse(response) {
      const jobs = jobsOf(response);
      if (jobs.length === 0) return;
      for (const job of jobs) job.priority = "normal";
      return response;
    },
  },
  {
    id: "jobs.dpo-beta-on-sft-accepted",
    areas: ["finetune"],
    transcripts: ["finetune/create-errors"],
    rule: "Decisions: config.dpoBeta only on DPO (on SFT → 400 INVALID_REQUEST)",
    description: "config.dpoBeta on an SFT request is dropped silently instead of rejected.",
    match: (request) => request.method === "POST" && /supervisedFineTuningJobs(:estimateCost)?$/.test(request.path),
    onRequest(request) {
      const config = objectAt(request.json, "config");
      if (config?.dpoBeta === undefined) return;
      delete config.dpoBeta;
      return request;
    },
  },

  // ---------------------------------------------------------------- lists: paging and filters
  {
    id: "paging.page-size-ignored",
    areas: ["finetune", "datasets"],
    transcripts: ["datasets/list-paging"],
    rule: "Endpoints 5: page size (1 to 200, default 50) bounds a page",
    description: "pageSize is ignored: every page is as long as the default.",
    match: (request) => is(request, "GET", LIST),
    onRequest(request) {
      if (!request.query.has("pageSize")) return;
      request.query.delete("pageSize");
      request.query.delete("pageToken");
      return request;
    },
  },
  {
    id: "paging.page-token-ignored",
    areas: ["finetune", "datasets"],
    transcripts: ["datasets/list-paging"],
    rule: "Endpoints 5: the page token continues where the previous page ended (no duplicates across pages)",
    description: "pageToken is ignored: every page is the first page again.",
    match: (request) => is(request, "GET", LIST),
    onRequest(request) {
      if (!request.query.has("pageToken")) return;
      request.query.delete("pageToken");
      return request;
    },
  },
  {
    id: "paging.next-token-missing",
    areas: ["finetune", "datasets"],
    transcripts: ["datasets/list-paging"],
    rule: "Endpoints 5: nextPageToken leads to the next page while there is one",
    description: 'nextPageToken is always "": a list stops after its first page.',
    match: (request) => is(request, "GET", LIST),
    onResponse(response) {
      const page = objectAt(response.json);
      if (response.status !== 200 || !page?.nextPageToken) return;
      page.nextPageToken = "";
      return response;
    },
  },
  {
    id: "paging.total-size-is-page-length",
    areas: ["finetune", "datasets"],
    transcripts: ["datasets/list-paging"],
    rule: "Decisions: totalSize is the number of items matching the filter over all pages",
    description: "totalSize counts the items of this page only.",
    match: (request) => is(request, "GET", LIST),
    onResponse(response, request) {
      const page = objectAt(response.json);
      const items = listAt(page, listKey(request.path));
      if (response.status !== 200 || !page || !items || page.totalSize === items.length) return;
      page.totalSize = items.length;
      return response;
    },
  },
  {
    id: "paging.oldest-first",
    areas: ["finetune"],
    transcripts: ["finetune/list-paging"],
    rule: "Endpoints 5: job lists are newest first",
    description: "Job list pages are in creation order (oldest first).",
    match: (request) => is(request, "GET", JOB_COLLECTION),
    onResponse(response, request) {
      const items = listAt(response.json, listKey(request.path));
      if (response.status !== 200 || !items || items.length < 2) return;
      items.reverse();
      return response;
    },
  },
  {
    id: "filter.ignored",
    areas: ["finetune", "datasets"],
    transcripts: ["limits/filter"],
    rule: "Endpoints 5: filter narrows by state (state:RUNNING)",
    description: "A valid filter is ignored: the list holds every state.",
    match: (request) => is(request, "GET", LIST),
    async onRequest(request, ctx) {
      if (!request.query.has("filter")) return;
      const probe = await resend(ctx, request, { query: new URLSearchParams(request.query) });
      if (probe.status !== 200) return;
      request.query.delete("filter");
      request.query.delete("pageToken");
      return request;
    },
  },
  {
    id: "filter.full-state-name-rejected",
    areas: ["finetune", "datasets"],
    transcripts: ["datasets/list-filter"],
    rule: "Decisions: the filter takes the short or the full state name (state:JOB_STATE_RUNNING)",
    description: "A filter with the full enum value (state:JOB_STATE_…) is rejected with 400.",
    match: (request) =>
      is(request, "GET", LIST) && /^state:(JOB_STATE_|DATASET_STATE_)/.test(request.query.get("filter") ?? ""),
    respond() {
      return jsonResponse(400, {
        error: {
          message: "filter must be state:<STATE>, e.g. state:RUNNING.",
          type: "invalid_request_error",
          code: "INVALID_REQUEST",
          param: "filter",
        },
      });
    },
  },
  {
    id: "paging.token-not-bound",
    areas: ["limits", "finetune", "datasets"],
    transcripts: ["limits/page-token"],
    rule: "Decisions: a page token used with other parameters is 400 (keep all other parameters unchanged while paging)",
    description: "A page token sent with changed parameters is ignored and the first page is answered.",
    match: (request) => is(request, "GET", LIST) && request.query.has("pageToken"),
    async onResponse(response, request, ctx) {
      if (response.status !== 400 || valueAt(response.json, "error", "param") !== "pageToken") return;
      const query = new URLSearchParams(request.query);
      query.delete("pageToken");
      const first = await resend(ctx, request, { query });
      return first.status === 200 ? first : undefined;
    },
  },
  {
    id: "datasets.deleted-listed",
    areas: ["datasets"],
    transcripts: ["datasets/list-paging"],
    rule: "Decisions: the unfiltered dataset list leaves out DELETED datasets",
    description: "Deleted datasets stay in the unfiltered list.",
    match: (request) => is(request, "GET", DATASETS) && !request.query.has("filter") && !request.query.has("pageToken"),
    async onResponse(response, request, ctx) {
      const items = listAt(response.json, "datasets");
      if (response.status !== 200 || !items) return;
      const query = new URLSearchParams(request.query);
      query.set("filter", "state:DELETED");
      const deleted = await resend(ctx, request, { query });
      const extra = listAt(deleted.json, "datasets") ?? [];
      if (extra.length === 0) return;
      items.push(...extra);
      return response;
    },
  },
  {
    id: "filter.invalid-accepted",
    areas: ["finetune", "datasets"],
    transcripts: ["limits/filter"],
    rule: "Decisions: a filter other than state:<STATE> is 400 INVALID_REQUEST",
    description: "An unparseable filter is ignored and the whole list returned.",
    match: (request) => is(request, "GET", LIST),
    async onResponse(response, request, ctx) {
      if (
        !request.query.has("filter") ||
        response.status !== 400 ||
        valueAt(response.json, "error", "param") !== "filter"
      )
        return;
      const query = new URLSearchParams(request.query);
      query.delete("filter");
      const all = await resend(ctx, request, { query });
      return all.status === 200 ? all : undefined;
    },
  },

  // ---------------------------------------------------------------- training curve
  {
    id: "metrics.not-thinned",
    areas: ["finetune"],
    transcripts: ["limits/max-points"],
    rule: "Endpoints 8: maxPoints bounds the curve; a longer curve is thinned on the server",
    description: "maxPoints is ignored: the whole curve comes back.",
    match: (request) => is(request, "GET", METRICS),
    onRequest(request) {
      if (!request.query.has("maxPoints")) return;
      request.query.delete("maxPoints");
      return request;
    },
  },
  {
    id: "metrics.truncated-not-thinned",
    areas: ["finetune"],
    transcripts: ["finetune/metrics"],
    rule: "Endpoints 8: a longer curve is thinned, not truncated (first and last kept)",
    description: "A curve over maxPoints is cut after maxPoints points instead of thinned (the last point is lost).",
    match: (request) => is(request, "GET", METRICS),
    async onResponse(response, request, ctx) {
      const max = Number(request.query.get("maxPoints") ?? 1000);
      const curve = objectAt(response.json);
      if (response.status !== 200 || !Array.isArray(curve?.points) || !(max >= 2)) return;
      if (Number(curve.totalPoints) <= max) return;
      const query = new URLSearchParams(request.query);
      query.set("maxPoints", "10000");
      const full = await resend(ctx, request, { query });
      const points = listAt(full.json, "points");
      if (!points) return;
      curve.points = points.slice(0, max);
      return response;
    },
  },
  {
    id: "metrics.first-point-dropped",
    areas: ["finetune"],
    transcripts: ["finetune/metrics"],
    rule: "Decisions: a thinned curve keeps its first and last points",
    description: "A thinned curve loses its first point (the thinning starts one stride in).",
    match: (request) => is(request, "GET", METRICS),
    onResponse(response) {
      const curve = objectAt(response.json);
      if (
        response.status !== 200 ||
        !Array.isArray(curve?.points) ||
        curve.points.length < 2 ||
        curve.points.length >= Number(curve.totalPoints)
      )
        return;
      curve.points.shift();
      return response;
    },
  },
  {
    id: "metrics.loss-as-number",
    areas: ["finetune"],
    transcripts: ["finetune/dpo"],
    rule: "Training curve: loss is a decimal string",
    description: "Each point's loss is a JSON number.",
    match: (request) => is(request, "GET", METRICS),
    onResponse(response) {
      const points = listAt(response.json, "points");
      if (response.status !== 200 || !points || points.length === 0) return;
      for (const point of objectsOf(points)) point.loss = Number(point.loss);
      return response;
    },
  },
  {
    id: "metrics.total-points-is-returned",
    areas: ["finetune"],
    transcripts: ["limits/max-points"],
    rule: "Training curve: totalPoints counts the whole curve, not the points returned",
    description: "totalPoints is the number of points in this (thinned) answer.",
    match: (request) => is(request, "GET", METRICS),
    onResponse(response) {
      const curve = objectAt(response.json);
      if (response.status !== 200 || !Array.isArray(curve?.points) || curve.totalPoints === String(curve.points.length))
        return;
      curve.totalPoints = String(curve.points.length);
      return response;
    },
  },
  {
    id: "metrics.newest-first",
    areas: ["finetune"],
    transcripts: ["finetune/metrics"],
    rule: "Endpoints 8: the training curve is oldest step first",
    description: "Points come newest first.",
    match: (request) => is(request, "GET", METRICS),
    onResponse(response) {
      const points = listAt(response.json, "points");
      if (response.status !== 200 || !points || points.length < 2) return;
      points.reverse();
      return response;
    },
  },

  // ---------------------------------------------------------------- cost estimate
  {
    id: "estimate.cost-arithmetic",
    areas: ["finetune"],
    rule: "Estimate: estimatedCost = tokensProcessed × ratePerMillion / 1e6",
    description: "estimatedCost is computed per thousand tokens instead of per million.",
    match: (request) => is(request, "POST", ESTIMATE),
    onResponse(response) {
      const estimate = objectAt(response.json, "estimate");
      const cost = objectAt(estimate, "estimatedCost");
      if (response.status !== 200 || !cost) return;
      const rate = Number(valueAt(estimate, "ratePerMillion", "amount"));
      const micros = (BigInt(String(estimate?.tokensProcessed)) * BigInt(Math.round(rate * 1e6))) / 1000n;
      cost.amount = `${micros / 1_000_000n}.${String(micros % 1_000_000n)
        .padStart(6, "0")
        .slice(0, 2)}`;
      return response;
    },
  },
  {
    id: "estimate.epochs-ignored",
    areas: ["finetune"],
    transcripts: ["limits/epochs"],
    rule: "Estimate: shows its working; tokensProcessed = tokens × epochs for the requested epochs",
    description: "config.epochs is ignored by the estimate: it always works out one epoch.",
    match: (request) => is(request, "POST", ESTIMATE),
    onRequest(request) {
      const config = objectAt(request.json, "config");
      if (config?.epochs === undefined || config.epochs === 1) return;
      delete config.epochs;
      return request;
    },
  },
  {
    id: "estimate.skipped-not-counted",
    areas: ["finetune"],
    transcripts: ["finetune/estimate-skips-long"],
    rule: "Limits / Estimate: examples longer than maxContextLength are skipped and counted, never truncated",
    description: 'Skipped examples are not counted: examplesSkipped is always "0".',
    match: (request) => is(request, "POST", ESTIMATE),
    onResponse(response) {
      const estimate = objectAt(response.json, "estimate");
      if (
        response.status !== 200 ||
        !estimate ||
        estimate.examplesSkipped === undefined ||
        estimate.examplesSkipped === "0"
      )
        return;
      estimate.examplesSkipped = "0";
      return response;
    },
  },
  {
    id: "estimate.int64-as-number",
    areas: ["finetune"],
    transcripts: ["limits/eval-carveout"],
    rule: "Cost estimate: exampleCount, avgTokensPerExample, tokensProcessed are 64-bit integers as strings",
    description: "The estimate's counts are JSON numbers.",
    match: (request) => is(request, "POST", ESTIMATE),
    onResponse(response) {
      const estimate = objectAt(response.json, "estimate");
      if (response.status !== 200 || !estimate) return;
      for (const field of ["exampleCount", "avgTokensPerExample", "tokensProcessed"])
        if (isInt64String(estimate[field])) estimate[field] = Number(estimate[field]);
      return response;
    },
  },
  {
    id: "estimate.creates-job",
    areas: ["finetune"],
    transcripts: ["finetune/estimate"],
    rule: "Endpoints 3: the estimate creates nothing",
    description: "estimateCost also creates the job it estimates.",
    match: (request) => is(request, "POST", ESTIMATE),
    async onResponse(response, request, ctx) {
      if (response.status !== 200) return;
      const created = await resend(ctx, request, { path: request.path.replace(/:estimateCost$/, "") });
      if (created.status === 201) ctx.hit();
      return response;
    },
  },

  // ---------------------------------------------------------------- datasets
  {
    id: "datasets.create-201",
    areas: ["datasets"],
    transcripts: ["limits/display-name"],
    rule: "Decisions: POST /accounts/{account}/datasets answers 200",
    description: "Dataset creation answers 201.",
    match: (request) => is(request, "POST", DATASETS),
    onResponse(response) {
      if (response.status !== 200) return;
      response.status = 201;
      return response;
    },
  },
  {
    id: "datasets.duplicate-id-accepted",
    areas: ["datasets"],
    transcripts: ["datasets/delete"],
    rule: "Decisions: creating an existing dataset id → 409 ALREADY_EXISTS",
    description: "Creating a dataset whose id exists returns the existing dataset (200).",
    match: (request) => is(request, "POST", DATASETS),
    async onResponse(response, request, ctx) {
      const datasetId = stringAt(request.json, "datasetId");
      if (errorCode(response) !== "ALREADY_EXISTS" || datasetId === undefined) return;
      const existing = await resend(ctx, request, {
        method: "GET",
        path: `${request.path}/${datasetId}`,
        body: Buffer.alloc(0),
        json: undefined,
      });
      return existing.status === 200 ? replace(response, 200, existing.json) : undefined;
    },
  },
  {
    id: "datasets.bad-line-accepted",
    areas: ["datasets"],
    transcripts: ["datasets/validation-failed"],
    rule: "Dataset states: VALIDATING → FAILED when a line is invalid",
    description: "Validation never fails: a dataset with a bad line ends READY (every line counted valid).",
    onResponse(response) {
      let changed = false;
      const fix = (version: JsonObject) => {
        if (version.state !== "DATASET_VERSION_STATE_FAILED") return;
        version.state = "DATASET_VERSION_STATE_READY";
        const validation = objectAt(version, "validation");
        if (validation) {
          validation.validLines = validation.totalLines;
          delete validation.firstInvalidLine;
        }
        changed = true;
      };
      for (const dataset of datasetsOf(response))
        if (dataset.state === "DATASET_STATE_FAILED") {
          dataset.state = "DATASET_STATE_READY";
          changed = true;
        }
      for (const version of versionsOf(response)) fix(version);
      return changed ? response : undefined;
    },
  },
  {
    id: "datasets.first-bad-line-missing",
    areas: ["datasets"],
    transcripts: ["datasets/validation-failed"],
    rule: "Dataset states: FAILED, first bad line reported in the version's validation",
    description: "A failed version's validation does not report the first bad line.",
    onResponse(response) {
      const failed = objectsOf(versionsOf(response).map((version) => version.validation)).filter(
        (validation) => validation.firstInvalidLine !== undefined,
      );
      if (failed.length === 0) return;
      for (const validation of failed) delete validation.firstInvalidLine;
      return response;
    },
  },
  {
    id: "datasets.full-view-ignored",
    areas: ["datasets"],
    transcripts: ["datasets/validation-failed"],
    rule: "Endpoints 9: view DATASET_VIEW_FULL adds versions and the jobs that used it",
    description: "The view parameter is ignored: the full view is the basic one.",
    match: (request) => is(request, "GET", DATASET),
    onRequest(request) {
      if (request.query.get("view") !== "DATASET_VIEW_FULL") return;
      request.query.delete("view");
      return request;
    },
  },
  {
    id: "datasets.basic-view-has-versions",
    areas: ["datasets"],
    transcripts: ["datasets/delete"],
    rule: "Endpoints 9: DATASET_VIEW_BASIC (default) is the dataset alone",
    description: "The default view includes versions and jobs, as if it were the full view.",
    match: (request) => is(request, "GET", DATASET),
    onRequest(request) {
      const view = request.query.get("view");
      if (view !== null && view !== "DATASET_VIEW_BASIC") return;
      request.query.set("view", "DATASET_VIEW_FULL");
      return request;
    },
  },
  {
    id: "datasets.upload-version-reused",
    areas: ["datasets"],
    transcripts: ["datasets/form-upload"],
    rule: "Decisions: each upload creates version n+1",
    description: "Every upload answers as version 1 (a later upload overwrites the first version).",
    match: (request) => request.method === "POST" && /\/datasets\/[^/:]+:upload$/.test(request.path),
    onResponse(response) {
      const version = objectAt(response.json);
      if (response.status !== 200 || typeof version?.versionNo !== "number" || version.versionNo === 1) return;
      version.versionNo = 1;
      version.name = String(version.name).replace(/\/versions\/\d+$/, "/versions/1");
      return response;
    },
  },
  {
    id: "datasets.trailing-newline-counted",
    areas: ["datasets"],
    transcripts: ["datasets/lifecycle"],
    rule: "Dataset version: exampleCount and validation.totalLines count the rows (a trailing newline is not a row)",
    description: "Validated versions count one line more than the file has (the trailing newline).",
    onResponse(response) {
      const ready = versionsOf(response).flatMap((version) => {
        const validation = objectAt(version, "validation");
        const counted =
          version.state === "DATASET_VERSION_STATE_READY" &&
          isInt64String(version.exampleCount) &&
          isInt64String(validation?.totalLines);
        return counted && validation ? [{ version, validation }] : [];
      });
      if (ready.length === 0) return;
      for (const { version, validation } of ready) {
        version.exampleCount = String(Number(version.exampleCount) + 1);
        validation.totalLines = String(Number(validation.totalLines) + 1);
        validation.validLines = validation.totalLines;
      }
      return response;
    },
  },
  {
    id: "datasets.delete-twice-not-found",
    areas: ["datasets"],
    transcripts: ["datasets/delete"],
    rule: "Decisions: deleting a deleted dataset again returns it unchanged",
    description: "A second DELETE of a dataset answers 404 NOT_FOUND.",
    match: (request) => request.method === "DELETE" && DATASET.test(request.path),
    async onRequest(request, ctx) {
      const before = await resend(ctx, request, { method: "GET", body: Buffer.alloc(0), json: undefined });
      if (valueAt(before.json, "state") === "DATASET_STATE_DELETED") ctx.state.set(`gone:${request.path}`, true);
    },
    respond(request, ctx) {
      if (!ctx.state.get(`gone:${request.path}`)) return;
      return jsonResponse(404, {
        error: { message: "Dataset not found.", type: "not_found_error", code: "NOT_FOUND", param: null },
      });
    },
  },
  {
    id: "datasets.source-wrong",
    areas: ["datasets"],
    transcripts: ["datasets/lifecycle"],
    rule: "Dataset: an uploaded dataset's source is DATASET_SOURCE_UPLOAD",
    description: "Uploaded datasets say source DATASET_SOURCE_SPLIT.",
    onResponse(response) {
      const datasets = datasetsOf(response).filter((d) => d.source === "DATASET_SOURCE_UPLOAD");
      if (datasets.length === 0) return;
      for (const dataset of datasets) dataset.source = "DATASET_SOURCE_SPLIT";
      return response;
    },
  },
  {
    id: "datasets.ready-before-validation",
    areas: ["datasets"],
    transcripts: ["datasets/lifecycle"],
    rule: "Dataset states: validateUpload starts validation; a version is READY only after it",
    description: "An upload answers its new version as DATASET_VERSION_STATE_READY at once.",
    match: (request) => request.method === "POST" && /\/datasets\/[^/:]+:upload$/.test(request.path),
    onResponse(response) {
      const version = objectAt(response.json);
      if (response.status !== 200 || version?.state !== "DATASET_VERSION_STATE_UPLOADING") return;
      version.state = "DATASET_VERSION_STATE_READY";
      return response;
    },
  },
  {
    id: "datasets.display-name-dropped",
    areas: ["datasets"],
    transcripts: ["limits/display-name"],
    rule: "Dataset: displayName is the one given at creation",
    description: "displayName is always empty.",
    onResponse(response) {
      const datasets = datasetsOf(response).filter((d) => typeof d.displayName === "string" && d.displayName !== "");
      if (datasets.length === 0) return;
      for (const dataset of datasets) dataset.displayName = "";
      return response;
    },
  },
  {
    id: "datasets.preference-format-wrong",
    areas: ["datasets"],
    rule: "Decisions: which format a version holds is recorded (format SFT or PREFERENCE)",
    description: "Preference datasets are reported as format SFT.",
    onResponse(response) {
      const versions = versionsOf(response).filter((version) => version.format === "PREFERENCE");
      if (versions.length === 0) return;
      for (const version of versions) version.format = "SFT";
      return response;
    },
  },
  {
    id: "datasets.int64-as-number",
    areas: ["datasets"],
    transcripts: ["limits/filter"],
    rule: "Dataset: totalBytes is a 64-bit integer as a string",
    description: "totalBytes is a JSON number.",
    onResponse(response) {
      const datasets = datasetsOf(response).filter((d) => isInt64String(d.totalBytes));
      if (datasets.length === 0) return;
      for (const dataset of datasets) dataset.totalBytes = Number(dataset.totalBytes);
      return response;
    },
  },
  {
    id: "datasets.latest-version-missing",
    areas: ["datasets"],
    transcripts: ["limits/filter"],
    rule: "Dataset: latestVersionNo is a listed (required) field",
    description: "Datasets are sent without latestVersionNo.",
    onResponse(response) {
      const datasets = datasetsOf(response).filter((d) => d.latestVersionNo !== undefined);
      if (datasets.length === 0) return;
      for (const dataset of datasets) delete dataset.latestVersionNo;
      return response;
    },
  },
  {
    id: "datasets.hard-delete",
    areas: ["datasets"],
    transcripts: ["datasets/delete"],
    rule: "Decisions: DELETE is a soft delete; GET still finds the dataset in DATASET_STATE_DELETED",
    description: "A deleted dataset is gone: GET answers 404 NOT_FOUND.",
    match: (request) => DATASET.test(request.path) && (request.method === "DELETE" || request.method === "GET"),
    onResponse(response, request, ctx) {
      if (request.method === "DELETE") {
        if (response.status === 200) ctx.state.set(`deleted:${request.path}`, true);
        return;
      }
      if (!ctx.state.has(`deleted:${request.path}`) || response.status !== 200) return;
      return replace(response, 404, {
        error: { message: "Dataset not found.", type: "not_found_error", code: "NOT_FOUND", param: null },
      });
    },
  },
  {
    id: "datasets.version-of-other-dataset",
    areas: ["datasets"],
    transcripts: ["datasets/lifecycle"],
    rule: "Dataset version: name accounts/{account}/datasets/{dataset}/versions/{n}",
    description:
      "GET of a version answers with a version name missing its dataset segment (…/versions/{n} of the account).",
    match: (request) => is(request, "GET", DATASET_VERSION),
    onResponse(response) {
      const version = objectAt(response.json);
      if (response.status !== 200 || typeof version?.name !== "string") return;
      version.name = version.name.replace(/\/datasets\/[^/]+\//, "/datasets/");
      return response;
    },
  },
  // ---------------------------------------------------------------- issue 15: order of checks, models, limits, messages
  {
    id: "auth.body-parsed-before-key",
    areas: ["auth"],
    transcripts: ["auth/key-before-body"],
    rule: "Decisions, order of checks: the key (401) comes before anything about the body",
    description: "A malformed JSON body is 400 INVALID_REQUEST even when the request has no key.",
    // Asked before the body is read: leave declared bodies that never come alone.
    match: (request) =>
      request.method === "POST" &&
      request.headers.authorization === undefined &&
      request.headers["x-api-key"] === undefined &&
      Number(request.headers["content-length"] ?? 0) < 1_000_000,
    respond(request) {
      if (request.json !== undefined || request.body.length === 0) return;
      return jsonResponse(400, {
        error: {
          message: "The request body is not valid JSON.",
          type: "invalid_request_error",
          code: "INVALID_REQUEST",
          param: null,
        },
      });
    },
  },
  {
    id: "models.unaccepted-licence-listed",
    areas: ["tenant", "inference"],
    transcripts: ["tenant/agreement"],
    rule: "Endpoints 2 / Decisions, Models: GET /models lists the models this key can call now (not one whose licence the account has not accepted)",
    description: "Every platform model is listed to every account, licensed or not.",
    match: (request) => is(request, "GET", /\/models$/),
    async onResponse(response, request, ctx) {
      const models = listAt(response.json, "data");
      if (response.status !== 200 || !models) return;
      const seen = new Set(models.map((m) => valueAt(m, "id")));
      const before = seen.size;
      for (const key of Object.values(ctx.keys())) {
        const theirs = await resend(ctx, withKey(request, key));
        for (const model of objectsOf(listAt(theirs.json, "data"))) {
          if (seen.has(model.id) || String(model.id).startsWith("accounts/")) continue;
          seen.add(model.id);
          models.push(model);
        }
      }
      return seen.size > before ? response : undefined;
    },
  },
  {
    id: "errors.first-problem-only",
    areas: ["responses", "errors"],
    transcripts: ["responses/store-required"],
    rule: "Decisions, Errors: a refused request's message names its other problems too",
    description:
      "A 400 names only its first problem; the others (a model that does not exist, a value out of range) come one call at a time.",
    match: postResponses,
    onResponse(response) {
      const error = objectAt(response.json, "error");
      const message = error?.message;
      if (response.status !== 400 || !error || typeof message !== "string" || !message.includes(" Also: ")) return;
      error.message = message.slice(0, message.indexOf(" Also: "));
      return response;
    },
  },
  {
    id: "inference.deadline-ignored-by-a-local-model",
    areas: ["responses"],
    transcripts: ["responses/request-timeout-header"],
    rule: "Decisions: x-request-timeout-ms bounds the whole call, local generation included",
    description: "A deadline shorter than a model's answer is not held: the answer comes, late.",
    match: inferenceSuccess,
    onRequest(request) {
      if (request.headers["x-request-timeout-ms"] !== "1") return;
      delete request.headers["x-request-timeout-ms"];
      return request;
    },
  },
  {
    id: "finetune.bare-base-model-accepted",
    areas: ["finetune"],
    transcripts: ["finetune/create-errors"],
    rule: "Endpoints 3: baseModel is the full resource name accounts/maas/models/{model}",
    description: "A bare model id (tiny-chat) is taken as the platform model's full name.",
    // The estimate only, so that no job is started.
    match: (request) => request.method === "POST" && ESTIMATE.test(request.path),
    onRequest(request) {
      const json = objectAt(request.json);
      const baseModel = json?.baseModel;
      if (!json || typeof baseModel !== "string" || baseModel.includes("/")) return;
      json.baseModel = `accounts/maas/models/${baseModel}`;
      return request;
    },
  },
  {
    id: "finetune.loss-with-exponent",
    areas: ["finetune"],
    transcripts: ["finetune/metrics"],
    rule: "Training curve: loss is a decimal string (no exponent)",
    description: "Losses are written as JavaScript prints numbers: 2.3e-7, 1e+21.",
    match: (request) => is(request, "GET", METRICS),
    onResponse(response) {
      const points = listAt(response.json, "points");
      if (response.status !== 200 || !points || points.length === 0) return;
      for (const point of objectsOf(points)) point.loss = Number(point.loss).toExponential();
      return response;
    },
  },
];

export function faultById(id: string): Fault {
  const fault = FAULTS.find((f) => f.id === id);
  if (!fault) throw new Error(`no fault ${id}`);
  return fault;
}
