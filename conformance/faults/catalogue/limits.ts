/**
 * Faults that break the `limits.*` rules of conformance/rules.yaml. The Limits table: the
 * bounds of request fields, headers and path ids.
 */
import { objectAt, valueAt } from "../json.ts";
import { isOperation, pathParams, JOB_OPERATIONS, LIST_OPERATIONS } from "../operations.ts";
import type { Fault } from "../proxy.ts";
import { postResponses, inferenceSuccess, jsonResponse, replace } from "./support.ts";

export const limitFaults: Fault[] = [
  {
    id: "limits.temperature-over-max-clamped",
    areas: ["limits", "responses"],
    transcripts: ["limits/temperature"],
    rule: "limits.temperature",
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
    rule: "limits.temperature",
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
    rule: "limits.top-p",
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
    rule: "limits.max-output-tokens",
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
    rule: "limits.page-size",
    description: "A pageSize above 200 is clamped to 200 instead of rejected.",
    match: (request) => isOperation(request, ...LIST_OPERATIONS),
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
    rule: "limits.idempotency-key",
    description: "An Idempotency-Key over 255 characters is truncated instead of rejected.",
    match: (request) => isOperation(request, ...JOB_OPERATIONS.create),
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
    rule: "limits.max-points",
    description: "maxPoints above 10000 is clamped instead of rejected.",
    match: (request) => isOperation(request, ...JOB_OPERATIONS.metrics),
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
    rule: "limits.epochs",
    description: "config.epochs above 100 is clamped to 100 instead of rejected.",
    match: (request) => isOperation(request, ...JOB_OPERATIONS.estimate, ...JOB_OPERATIONS.create),
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
    rule: "limits.eval-carveout",
    description: "evalAutoCarveoutBasisPoints of 10000 or more is taken as 9999 instead of rejected.",
    match: (request) => isOperation(request, ...JOB_OPERATIONS.estimate, ...JOB_OPERATIONS.create),
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
    rule: "limits.display-name",
    description: "A displayName over 256 characters is cut to 256 instead of rejected.",
    match: (request) => isOperation(request, "createDataset"),
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
    rule: "limits.dataset-id",
    description: "A path id over 64 characters answers 404 NOT_FOUND instead of 400 INVALID_REQUEST.",
    match: (request) => isOperation(request, ...JOB_OPERATIONS.get, "getDataset"),
    onResponse(response, request) {
      const { job, dataset } = pathParams(request);
      if ((job ?? dataset ?? "").length <= 64 || response.status !== 400) return;
      return replace(response, 404, {
        error: { message: "Not found.", type: "not_found_error", code: "NOT_FOUND", param: null },
      });
    },
  },
];
