/**
 * Faults that break the `responses.*` rules of conformance/rules.yaml. POST /responses: its
 * numbered rules, the request (input, model, tools, reasoning) and the response object.
 */
import { randomBytes } from "node:crypto";
import { isObject, listAt, objectAt, objectsOf, stringAt, valueAt } from "../json.ts";
import { apiPath } from "../operations.ts";
import type { Fault } from "../proxy.ts";
import { postResponses, inferenceSuccess, isStream, jsonResponse, finalResponse } from "./support.ts";

export const responseFaults: Fault[] = [
  {
    id: "responses.store-true-accepted",
    areas: ["responses"],
    transcripts: ["responses/store-required"],
    rule: "responses.rule-1",
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
    rule: "responses.rule-2",
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
    rule: "responses.rule-3",
    description: "GET /responses/{id} answers 200 with a response object, as if responses were stored.",
    // The contract has no such operation (that is the rule), so the path is matched as text.
    match: (request) =>
      (request.method === "GET" || request.method === "DELETE") && /^\/responses\/[^/]+$/.test(apiPath(request) ?? ""),
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
    rule: "responses.rule-4",
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
    rule: "responses.rule-5",
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
    rule: "responses.rule-6",
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
    id: "responses.store-echoed-true",
    areas: ["responses", "events"],
    transcripts: ["responses/model-full-name"],
    rule: "responses.rule-1",
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
    rule: "responses.object",
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
    rule: "responses.object",
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
    rule: "responses.usage",
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
    id: "responses.undeclared-field",
    areas: ["responses"],
    transcripts: ["responses/model-full-name"],
    rule: "responses.object",
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
    rule: "responses.object",
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
    id: "responses.id-missing",
    areas: ["responses"],
    transcripts: ["responses/model-full-name"],
    rule: "responses.object",
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
    rule: "responses.reasoning",
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
    id: "responses.fine-tuned-model-not-served",
    areas: ["finetune"],
    transcripts: ["finetune/output-model"],
    rule: "responses.model-names",
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
    rule: "responses.usage",
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
    rule: "responses.tools",
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
    rule: "responses.tools",
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
    rule: "responses.reasoning",
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
    rule: "responses.input",
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
    id: "sse.content-type-not-event-stream",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "responses.stream",
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
    rule: "responses.stream",
    description: "stream:true is ignored: the whole response comes back as one JSON object.",
    match: postResponses,
    onRequest(request) {
      const json = objectAt(request.json);
      if (json?.stream !== true) return;
      json.stream = false;
      return request;
    },
  },
];
