/**
 * Faults that break the `headers.*` rules of conformance/rules.yaml. Headers on responses:
 * x-request-id, x-provider-class, x-config-version, Retry-After.
 */
import type { Fault } from "../proxy.ts";
import { isOperation } from "../operations.ts";
import { inferenceSuccess, isStream } from "./support.ts";

export const headerFaults: Fault[] = [
  {
    id: "headers.inference-headers-missing-on-models",
    areas: ["inference"],
    transcripts: ["inference/models-headers"],
    rule: "headers.x-provider-class",
    description:
      "Model listing (GET /models, GET /models/{model}) answers without x-provider-class and x-config-version, as if it were not an inference endpoint.",
    match: (request) => isOperation(request, "listModels", "getModel"),
    onResponse(response) {
      if (response.status !== 200 || response.headers["x-provider-class"] === undefined) return;
      delete response.headers["x-provider-class"];
      delete response.headers["x-config-version"];
      return response;
    },
  },
  {
    id: "headers.request-id-missing-on-errors",
    areas: ["errors", "auth"],
    transcripts: ["tenant/budget"],
    rule: "headers.x-request-id",
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
    rule: "headers.x-request-id",
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
    rule: "headers.retry-after",
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
    rule: "headers.retry-after",
    description: "Retry-After on 429/503 is an HTTP date instead of whole seconds.",
    onResponse(response) {
      if (response.status !== 429 && response.status !== 503) return;
      const seconds = Number(response.headers["retry-after"] ?? 1);
      response.headers["retry-after"] = new Date(Date.now() + seconds * 1000).toUTCString();
      return response;
    },
  },
  {
    id: "headers.retry-after-zero",
    areas: ["tenant", "limits", "errors"],
    transcripts: ["tenant/budget"],
    rule: "headers.retry-after",
    description: "Retry-After on 429/503 is 0 (retry at once), a whole number but not a wait.",
    onResponse(response) {
      if (response.status !== 429 && response.status !== 503) return;
      response.headers["retry-after"] = "0";
      return response;
    },
  },
  {
    id: "headers.request-id-constant",
    areas: ["responses", "errors", "auth"],
    rule: "headers.x-request-id",
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
    rule: "headers.x-provider-class",
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
    rule: "headers.x-provider-class",
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
    rule: "headers.x-config-version",
    description: "Successful inference answers lack x-config-version.",
    match: inferenceSuccess,
    onResponse(response) {
      if (response.status !== 200) return;
      delete response.headers["x-config-version"];
      return response;
    },
  },
];
