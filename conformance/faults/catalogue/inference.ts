/**
 * Faults that break the `inference.*` rules of conformance/rules.yaml. The other inference
 * endpoints (chat completions, messages, models) and the failures of upstream providers.
 */
import { randomBytes } from "node:crypto";
import { listAt, objectAt, objectsOf, valueAt } from "../json.ts";
import { isOperation, isAtPathOf, pathParams } from "../operations.ts";
import type { Fault, SseEvent } from "../proxy.ts";
import { postResponses, inferenceSuccess, errorCode, errorWithCode, replace, withKey, resend } from "./support.ts";

/** The output ceiling a request sets, by the name its endpoint gives it. */
const CEILING_FIELDS = ["max_output_tokens", "max_tokens", "max_completion_tokens"];

export const inferenceFaults: Fault[] = [
  {
    id: "inference.ceiling-ignored-on-calls",
    areas: ["responses", "inference"],
    transcripts: ["responses/incomplete-function-call", "inference/output-ceiling"],
    rule: "inference.output-ceiling",
    description:
      "The output ceiling is applied to text only: a request with function tools is generated as if its ceiling were 256 tokens, so a call under a ceiling of 1 comes back whole and complete.",
    match: (request) => isOperation(request, "createResponse", "createChatCompletion", "createMessage"),
    onRequest(request) {
      const json = objectAt(request.json);
      if (!json || listAt(json, "tools")?.length === undefined || listAt(json, "tools")?.length === 0) return;
      const fields = CEILING_FIELDS.filter((field) => typeof json[field] === "number" && (json[field] as number) < 256);
      if (fields.length === 0) return;
      for (const field of fields) json[field] = 256;
      return request;
    },
  },
  {
    id: "responses.blocked-input-served",
    areas: ["responses"],
    transcripts: ["responses/content-blocked-input"],
    rule: "inference.content-policy",
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
    rule: "inference.context-length",
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
    id: "chat.done-removed",
    areas: ["inference"],
    transcripts: ["inference/completions"],
    rule: "inference.stream-done",
    description: "The chat completions stream ends without its data: [DONE] line.",
    match: (request) => isOperation(request, "createChatCompletion", "createCompletion"),
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
    rule: "inference.usage",
    description: "A chat completion's usage.total_tokens is prompt_tokens only.",
    match: (request) => isOperation(request, "createChatCompletion"),
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
    rule: "inference.messages",
    description: "Errors of the messages endpoint lack the top-level type the other vendor's SDK reads.",
    match: (request) => isAtPathOf(request, "createMessage"),
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
    rule: "inference.models",
    description: "The model list includes the fine-tuned models of every account.",
    match: (request) => isOperation(request, "listModels"),
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
    rule: "inference.stream-chunks",
    description: "Each chunk of a chat completions stream carries a new id.",
    match: (request) => isOperation(request, "createChatCompletion"),
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
    rule: "inference.messages-stream",
    description: "message_stop is sent before message_delta.",
    match: (request) => isAtPathOf(request, "createMessage"),
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
    id: "models.conditional-get-304",
    areas: ["inference"],
    transcripts: ["inference/models"],
    rule: "inference.models",
    description:
      "A GET with If-None-Match: * is an empty 304 (express's default), which the contract does not declare.",
    match: (request) => request.method === "GET" && request.headers["if-none-match"] === "*",
    onResponse(response) {
      if (response.status !== 200) return;
      const headers = { ...response.headers };
      delete headers["content-type"];
      delete headers["content-length"];
      return { status: 304, headers, body: Buffer.alloc(0) };
    },
  },
  {
    id: "models.unknown-model-found",
    areas: ["inference"],
    transcripts: ["inference/models"],
    rule: "inference.models",
    description: "GET /models/{model} answers 200 with a made-up model for any id.",
    match: (request) => isOperation(request, "getModel"),
    onResponse(response, request) {
      if (response.status !== 404) return;
      const id = pathParams(request).model;
      return replace(response, 200, { id, object: "model", created: 1767225600, owned_by: "maas" });
    },
  },
  {
    id: "errors.model-not-found-generic",
    areas: ["errors", "responses"],
    transcripts: ["responses/model-not-found"],
    rule: "inference.model-not-found",
    description: "An unknown model is 404 with the generic code NOT_FOUND instead of MODEL_NOT_FOUND.",
    onResponse(response) {
      const error = errorWithCode(response, "MODEL_NOT_FOUND");
      if (!error) return;
      error.code = "NOT_FOUND";
      return response;
    },
  },
  {
    id: "upstream.fallback-reported-primary",
    areas: ["upstream"],
    transcripts: ["upstream/fallback"],
    target: "upstream",
    rule: "inference.upstream",
    description: "x-provider-class always says primary, also when a standby served.",
    match: inferenceSuccess,
    onResponse(response) {
      if (response.headers["x-provider-class"] !== "fallback") return;
      response.headers["x-provider-class"] = "primary";
      return response;
    },
  },
  {
    id: "upstream.ceiling-trusted-to-upstream",
    areas: ["upstream"],
    transcripts: ["upstream/output-ceiling"],
    target: "upstream",
    rule: "inference.output-ceiling",
    description:
      "The ceiling is forwarded to the upstream as max_tokens and trusted: what an upstream that ignores it sends is passed on whole, reported complete (emulated by raising the request's ceiling past anything the upstream sends).",
    match: inferenceSuccess,
    onRequest(request) {
      const json = objectAt(request.json);
      const fields = CEILING_FIELDS.filter(
        (field) => typeof json?.[field] === "number" && (json[field] as number) < 256,
      );
      if (!json || fields.length === 0) return;
      for (const field of fields) json[field] = 256;
      return request;
    },
  },
  {
    id: "upstream.timeout-code-swapped",
    areas: ["upstream"],
    transcripts: ["upstream/timeout"],
    target: "upstream",
    rule: "inference.upstream",
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
    rule: "inference.upstream",
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
    rule: "inference.upstream",
    description: "A 500's message carries the exception and its stack frame.",
    onResponse(response) {
      const error = errorWithCode(response, "INTERNAL");
      if (!error) return;
      error.message = `Error: provider failed\n    at generate (/srv/app/server/inference/engine.ts:212:11)`;
      return response;
    },
  },
  {
    id: "models.unaccepted-licence-listed",
    areas: ["tenant", "inference"],
    transcripts: ["tenant/agreement"],
    rule: "inference.models",
    description: "Every platform model is listed to every account, licensed or not.",
    match: (request) => isOperation(request, "listModels"),
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
    id: "inference.deadline-ignored-by-a-local-model",
    areas: ["responses"],
    transcripts: ["responses/request-timeout-header"],
    rule: "inference.deadline",
    description: "A deadline shorter than a model's answer is not held: the answer comes, late.",
    match: inferenceSuccess,
    onRequest(request) {
      if (request.headers["x-request-timeout-ms"] !== "1") return;
      delete request.headers["x-request-timeout-ms"];
      return request;
    },
  },
];
