/**
 * Responses: statuses and media types removed or added; then headers, bodies and event
 * streams. Success statuses are 2XX. An error status added to an operation is compatible
 * (clients must handle unexpected errors anyway); which error codes each status carries
 * is judged by rules/error-codes.ts.
 */
import { defineRule, type Change, type Rule } from "../model.ts";
import { derefObject, isObject, isSuccessStatus, operationLabel, type OperationRef } from "../openapi.ts";
import { diffSchemas } from "../schema-diff.ts";
import { inPart, type DiffContext } from "./context.ts";
import { checkResponseHeaders } from "./headers.ts";
import { checkEventStream } from "./sse.ts";

export const successStatusRemoved = defineRule({
  id: "response-success-status-removed",
  level: "ERR",
  breaks: "clients",
  description: "A success status was removed; clients expecting it get another.",
});
export const errorStatusRemoved = defineRule({
  id: "response-non-success-status-removed",
  level: "WARN",
  breaks: "implementations",
  description: "An error status was removed; implementations built on the base may still answer with it.",
});
export const successStatusAdded = defineRule({
  id: "response-success-status-added",
  level: "WARN",
  breaks: "clients",
  description: "A new success status; clients may only handle the ones they knew.",
});
export const errorStatusAdded = defineRule({
  id: "response-non-success-status-added",
  level: "INFO",
  breaks: "none",
  description: "A new error status; clients handle unexpected errors generically.",
});
export const responseMediaTypeRemoved = defineRule({
  id: "response-media-type-removed",
  level: "ERR",
  breaks: "clients",
  description: "A response media type was removed; clients asking for it no longer get it.",
});
export const responseMediaTypeAdded = defineRule({
  id: "response-media-type-added",
  level: "INFO",
  breaks: "none",
  description: "A new response media type (clients negotiate what they get).",
});

export const responseRules = [
  successStatusRemoved,
  errorStatusRemoved,
  successStatusAdded,
  errorStatusAdded,
  responseMediaTypeRemoved,
  responseMediaTypeAdded,
];

function responseChange(rule: Rule, part: string, message: string): Change {
  return { rule, message, part, path: [] };
}

export function checkResponses(base: OperationRef, head: OperationRef, ctx: DiffContext): Change[] {
  const before: Record<string, unknown> = isObject(base.operation.responses) ? base.operation.responses : {};
  const after: Record<string, unknown> = isObject(head.operation.responses) ? head.operation.responses : {};
  const changes: Change[] = [];
  for (const [status, raw] of Object.entries(before)) {
    const part = `response ${status}`;
    if (!(status in after)) {
      changes.push(
        responseChange(
          isSuccessStatus(status) ? successStatusRemoved : errorStatusRemoved,
          part,
          `status ${status} removed`,
        ),
      );
      continue;
    }
    const response = derefObject(ctx.base, raw).node ?? {};
    const other = derefObject(ctx.head, after[status]).node ?? {};
    changes.push(...checkResponseHeaders(response, other, part, ctx));
    changes.push(...checkResponseContent(response.content, other.content, part, ctx));
  }
  for (const status of Object.keys(after)) {
    if (!(status in before))
      changes.push(
        responseChange(
          isSuccessStatus(status) ? successStatusAdded : errorStatusAdded,
          `response ${status}`,
          `status ${status} added`,
        ),
      );
  }
  return changes.map((c) => ({ ...c, operation: operationLabel(head) }));
}

function checkResponseContent(
  beforeContent: unknown,
  afterContent: unknown,
  responsePart: string,
  ctx: DiffContext,
): Change[] {
  const before: Record<string, unknown> = isObject(beforeContent) ? beforeContent : {};
  const after: Record<string, unknown> = isObject(afterContent) ? afterContent : {};
  const changes: Change[] = [];
  for (const [mediaType, media] of Object.entries(before)) {
    const part = `${responsePart} ${mediaType}`;
    const other = after[mediaType];
    if (!isObject(other)) {
      changes.push(responseChange(responseMediaTypeRemoved, part, `media type \`${mediaType}\` removed`));
      continue;
    }
    const mediaObject = isObject(media) ? media : {};
    if (mediaObject.itemSchema !== undefined && other.itemSchema !== undefined) {
      changes.push(...checkEventStream(mediaObject, other, part, ctx));
    } else if (mediaObject.schema !== undefined || other.schema !== undefined) {
      changes.push(...inPart(part, diffSchemas(mediaObject.schema, other.schema, ctx.response)));
    }
  }
  for (const mediaType of Object.keys(after)) {
    if (!(mediaType in before))
      changes.push(
        responseChange(responseMediaTypeAdded, `${responsePart} ${mediaType}`, `media type \`${mediaType}\` added`),
      );
  }
  return changes;
}
