/**
 * Faults that break the `auth.*` rules of conformance/rules.yaml. Authentication: Bearer and
 * x-api-key, invalid and suspended keys, the account a key reaches, the key before the body.
 */
import { objectAt } from "../json.ts";
import { isOperation, isAtPathOf, isAccountScoped, pathParams, JOB_OPERATIONS } from "../operations.ts";
import type { Fault } from "../proxy.ts";
import { inferenceSuccess, errorCode, errorWithCode, jsonResponse, withKey, resend } from "./support.ts";

export const authFaults: Fault[] = [
  {
    id: "responses.x-api-key-accepted",
    areas: ["auth", "responses"],
    transcripts: ["inference/models"],
    rule: "auth.x-api-key",
    description: "/responses (and every other endpoint) also accepts the key as x-api-key.",
    match: (request) =>
      !isAtPathOf(request, "createMessage") &&
      request.headers["x-api-key"] !== undefined &&
      request.headers.authorization === undefined,
    onRequest(request) {
      return withKey(request, request.headers["x-api-key"] as string);
    },
  },
  {
    id: "messages.x-api-key-rejected",
    areas: ["auth", "inference"],
    transcripts: ["inference/messages-stream"],
    rule: "auth.x-api-key",
    description: "The messages endpoint ignores x-api-key and answers 401 INVALID_API_KEY.",
    match: (request) => isAtPathOf(request, "createMessage") && request.headers["x-api-key"] !== undefined,
    onRequest(request) {
      delete request.headers["x-api-key"];
      return request;
    },
  },
  {
    id: "auth.path-account-not-checked",
    areas: ["auth", "finetune", "datasets"],
    transcripts: ["auth/other-account-path"],
    rule: "auth.account-scope",
    description: "The {account} path segment is trusted: a key reads (and writes) another account's jobs and datasets.",
    match: (request) => isAccountScoped(request),
    onRequest(request, ctx) {
      const account = pathParams(request).account as string;
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
    rule: "auth.account-scope",
    description:
      "A job is looked up by id alone: another account's job id under the caller's own path returns that job.",
    match: (request) => isOperation(request, ...JOB_OPERATIONS.get, ...JOB_OPERATIONS.metrics),
    async onResponse(response, request, ctx) {
      if (response.status !== 404) return;
      const { account } = pathParams(request);
      for (const [other, key] of Object.entries(ctx.keys())) {
        if (other === account) continue;
        const path = request.path.replace(`/accounts/${account}/`, `/accounts/${other}/`);
        const found = await resend(ctx, withKey(request, key), { path });
        if (found.status === 200) return found;
      }
    },
  },
  {
    id: "auth.suspended-tenant-served",
    areas: ["tenant", "auth", "errors"],
    transcripts: ["auth/suspended"],
    rule: "auth.suspended",
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
    id: "auth.invalid-key-403",
    areas: ["auth", "errors"],
    transcripts: ["inference/models"],
    rule: "auth.invalid-key",
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
    rule: "auth.account-scope",
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
  {
    id: "errors.suspended-code-swapped",
    areas: ["tenant", "errors", "auth"],
    transcripts: ["auth/suspended"],
    rule: "auth.suspended",
    description: "A suspended tenant gets 403 permission_error with code OPERATION_NOT_ALLOWED (same status and type).",
    onResponse(response) {
      const error = errorWithCode(response, "TENANT_SUSPENDED");
      if (!error) return;
      error.code = "OPERATION_NOT_ALLOWED";
      return response;
    },
  },
  {
    id: "auth.body-parsed-before-key",
    areas: ["auth"],
    transcripts: ["auth/key-before-body"],
    rule: "auth.before-body",
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
];
