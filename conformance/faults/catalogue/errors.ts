/**
 * Faults that break the `errors.*` rules of conformance/rules.yaml. Errors: the envelope, type
 * by status, codes by status, the numbered error rules.
 */
import { objectAt, valueAt } from "../json.ts";
import type { Fault } from "../proxy.ts";
import { postResponses, errorCode, jsonResponse } from "./support.ts";

export const errorFaults: Fault[] = [
  {
    id: "headers.retry-after-missing-on-503",
    areas: ["upstream"],
    transcripts: ["upstream/unavailable"],
    target: "upstream",
    rule: "errors.rule-3",
    description: "503 answers (an upstream that cannot serve) come without Retry-After.",
    onResponse(response) {
      if (response.status !== 503 || response.headers["retry-after"] === undefined) return;
      delete response.headers["retry-after"];
      return response;
    },
  },
  {
    id: "responses.unknown-parameter-rejected",
    areas: ["responses", "errors"],
    transcripts: ["responses/unknown-params-ignored"],
    rule: "errors.rule-2",
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
    id: "sse.error-event-dropped",
    areas: ["upstream"],
    transcripts: ["upstream/blocked-output"],
    target: "upstream",
    rule: "errors.rule-4",
    description: "A stream that fails part-way is simply closed: the error event is not sent.",
    match: postResponses,
    onResponse(response) {
      if (!response.events?.some((e) => e.event === "error")) return;
      response.events = response.events.filter((e) => e.event !== "error");
      return response;
    },
  },
  {
    id: "sse.error-event-without-code",
    areas: ["upstream"],
    transcripts: ["upstream/cut-stream"],
    target: "upstream",
    rule: "errors.rule-4",
    description: "The error event that ends a stream failing part-way carries a message but no code.",
    match: postResponses,
    onResponse(response) {
      const errors = (response.events ?? [])
        .filter((e) => e.event === "error")
        .map((e) => objectAt(e.json))
        .filter((data) => data !== undefined && "code" in data);
      if (errors.length === 0) return;
      for (const data of errors) delete data?.code;
      return response;
    },
  },
  {
    id: "sse.cut-stream-reported-completed",
    areas: ["upstream"],
    transcripts: ["upstream/blocked-output"],
    target: "upstream",
    rule: "errors.rule-4",
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
    id: "errors.billing-type-wrong",
    areas: ["tenant", "errors"],
    transcripts: ["tenant/payment-required"],
    rule: "errors.type",
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
    rule: "errors.envelope",
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
    id: "errors.no-envelope",
    areas: ["errors"],
    transcripts: ["responses/model-not-found"],
    rule: "errors.envelope",
    description: "404 errors are sent flat: {message, code} at the top level.",
    onResponse(response) {
      const error = objectAt(response.json, "error");
      if (response.status !== 404 || !error) return;
      const { message, code } = error;
      response.json = { message, code };
      return response;
    },
  },
  {
    id: "jobs.cancel-state-invalid-as-400",
    areas: ["finetune", "errors"],
    transcripts: ["finetune/cancel-running-sft"],
    rule: "errors.codes-by-status",
    description: "JOB_STATE_INVALID comes with HTTP 400 (code and type unchanged).",
    onResponse(response) {
      if (errorCode(response) !== "JOB_STATE_INVALID") return;
      response.status = 400;
      return response;
    },
  },
  {
    id: "errors.first-problem-only",
    areas: ["responses", "errors"],
    transcripts: ["responses/store-required"],
    rule: "errors.all-problems",
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
];
