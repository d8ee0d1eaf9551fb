/**
 * What the catalogue's faults share: which requests they look at (by the contract's operations,
 * see ../operations.ts), reading answers (the error code, the final response, the jobs,
 * datasets and versions of an answer), and making answers and upstream calls of their own (a
 * canned JSON answer, the same request with another key, a renumbered stream).
 */
import { randomBytes } from "node:crypto";
import { isObject, objectAt, objectsOf, stringAt, type JsonObject } from "../json.ts";
import { INFERENCE_OPERATIONS, isOperation } from "../operations.ts";
import type { FaultContext, ProxyRequest, ProxyResponse, SseEvent } from "../proxy.ts";

// ---------------------------------------------------------------- requests

export const postResponses = (request: ProxyRequest) => isOperation(request, "createResponse");
/** A call of one of the inference endpoints (whatever its answer). */
export const inferenceSuccess = (request: ProxyRequest) => isOperation(request, ...INFERENCE_OPERATIONS);

// ---------------------------------------------------------------- answers

export const isStream = (response: ProxyResponse) => response.events !== undefined;
export const errorCode = (response: ProxyResponse): string | undefined => stringAt(response.json, "error", "code");
/** The error object of an answer when its code is `code`; undefined otherwise. */
export const errorWithCode = (response: ProxyResponse, code: string): JsonObject | undefined =>
  errorCode(response) === code ? objectAt(response.json, "error") : undefined;

export function requestId(): string {
  return `req_${randomBytes(12).toString("hex")}`;
}

export function jsonResponse(
  status: number,
  json: unknown,
  headers: Record<string, string | string[]> = {},
): ProxyResponse {
  const body = Buffer.from(JSON.stringify(json));
  return {
    status,
    headers: { "content-type": "application/json; charset=utf-8", "x-request-id": requestId(), ...headers },
    body,
    json,
  };
}

/** Replaces a response's status and JSON body, keeping its headers (x-request-id stays). */
export function replace(response: ProxyResponse, status: number, json: unknown): ProxyResponse {
  const body = Buffer.from(JSON.stringify(json));
  const headers: Record<string, string | string[]> = {
    ...response.headers,
    "content-type": "application/json; charset=utf-8",
  };
  delete headers["retry-after"];
  return { status, headers, body, json };
}

export function withKey(request: ProxyRequest, key: string): ProxyRequest {
  const headers: Record<string, string> = { ...request.headers, authorization: `Bearer ${key}` };
  delete headers["x-api-key"];
  return { ...request, headers };
}

/** Sends the request upstream again as it is, but with other headers or path. */
export function resend(
  ctx: FaultContext,
  request: ProxyRequest,
  changes: Partial<ProxyRequest> = {},
): Promise<ProxyResponse> {
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

// ---------------------------------------------------------------- streams

/** Numbers `sequence_number` 0, 1, 2, … again after a fault dropped, added or moved events. */
export function renumber(events: SseEvent[]): void {
  let n = 0;
  for (const event of events)
    if (isObject(event.json) && typeof event.json.sequence_number === "number") event.json.sequence_number = n++;
}

export function clone(event: SseEvent): SseEvent {
  return { ...event, json: structuredClone(event.json) };
}

export const indexOfEvent = (events: SseEvent[], name: string) => events.findIndex((e) => e.event === name);
export const completed = (events: SseEvent[]) => events.find((e) => e.event === "response.completed");

/** The final response object of a /responses call, streamed or not. */
export function finalResponse(response: ProxyResponse): JsonObject | undefined {
  if (response.events) return objectAt(completed(response.events)?.json, "response");
  return response.status === 200 ? objectAt(response.json) : undefined;
}

// ---------------------------------------------------------------- fine-tuning resources

/** Every job object of a job answer (one job, or a list page). */
export function jobsOf(response: ProxyResponse): JsonObject[] {
  const json = objectAt(response.json);
  if (!json || response.status >= 300) return [];
  if (Array.isArray(json.supervisedFineTuningJobs)) return objectsOf(json.supervisedFineTuningJobs);
  if (Array.isArray(json.dpoJobs)) return objectsOf(json.dpoJobs);
  return typeof json.jobType === "string" ? [json] : [];
}

export function datasetsOf(response: ProxyResponse): JsonObject[] {
  const json = objectAt(response.json);
  if (!json || response.status >= 300) return [];
  if (Array.isArray(json.datasets)) return objectsOf(json.datasets);
  return typeof json.datasetId === "string" ? [json] : [];
}

/** Every dataset version object of a dataset answer: a dataset's or a list page's versions, or one version. */
export function versionsOf(response: ProxyResponse): JsonObject[] {
  const own = objectAt(response.json);
  return [
    ...datasetsOf(response).flatMap((dataset) => objectsOf(dataset.versions)),
    ...(typeof own?.versionNo === "number" ? [own] : []),
  ];
}

export function isInt64String(value: unknown): value is string {
  return typeof value === "string" && /^(0|[1-9][0-9]*)$/.test(value);
}
