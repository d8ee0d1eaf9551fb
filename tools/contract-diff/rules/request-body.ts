/** The request body: present or not, required or not, its media types and their schemas. */
import { defineRule, type Change, type Rule } from "../model.ts";
import { derefObject, isObject, objectAt, operationLabel, type OperationRef } from "../openapi.ts";
import { diffSchemas } from "../schema-diff.ts";
import { inPart, type DiffContext } from "./context.ts";

export const requestBodyRemoved = defineRule({
  id: "request-body-removed",
  level: "ERR",
  breaks: "clients",
  description: "The request body was removed; what clients send is no longer read.",
});
export const requiredRequestBodyAdded = defineRule({
  id: "request-body-added-required",
  level: "ERR",
  breaks: "clients",
  description: "A required request body was added; base clients send none.",
});
export const optionalRequestBodyAdded = defineRule({
  id: "request-body-added-optional",
  level: "INFO",
  breaks: "none",
  description: "An optional request body was added.",
});
export const requestBodyBecameRequired = defineRule({
  id: "request-body-became-required",
  level: "ERR",
  breaks: "clients",
  description: "The request body became required; clients sending none are rejected.",
});
export const requestBodyBecameOptional = defineRule({
  id: "request-body-became-optional",
  level: "WARN",
  breaks: "implementations",
  description: "The request body became optional; an implementation built on the base rejects requests without one.",
});
export const requestMediaTypeRemoved = defineRule({
  id: "request-media-type-removed",
  level: "ERR",
  breaks: "clients",
  description: "A request media type was removed; clients sending it get 415.",
});
export const requestMediaTypeAdded = defineRule({
  id: "request-media-type-added",
  level: "WARN",
  breaks: "implementations",
  description: "A request media type was added; an implementation built on the base answers it with 415.",
});

export const requestBodyRules = [
  requestBodyRemoved,
  requiredRequestBodyAdded,
  optionalRequestBodyAdded,
  requestBodyBecameRequired,
  requestBodyBecameOptional,
  requestMediaTypeRemoved,
  requestMediaTypeAdded,
];

function bodyChange(rule: Rule, op: OperationRef, message: string, part = "request body"): Change {
  return { rule, message, operation: operationLabel(op), part, path: [] };
}

export function checkRequestBody(base: OperationRef, head: OperationRef, ctx: DiffContext): Change[] {
  const before = derefObject(ctx.base, base.operation.requestBody).node;
  const after = derefObject(ctx.head, head.operation.requestBody).node;
  if (before === undefined && after === undefined) return [];
  if (after === undefined) return [bodyChange(requestBodyRemoved, head, "request body removed")];
  if (before === undefined) {
    return after.required === true
      ? [bodyChange(requiredRequestBodyAdded, head, "required request body added")]
      : [bodyChange(optionalRequestBodyAdded, head, "optional request body added")];
  }
  const changes: Change[] = [];
  if (before.required !== true && after.required === true)
    changes.push(bodyChange(requestBodyBecameRequired, head, "request body is now required"));
  if (before.required === true && after.required !== true)
    changes.push(bodyChange(requestBodyBecameOptional, head, "request body is now optional"));
  const beforeContent = isObject(before.content) ? before.content : {};
  const afterContent = isObject(after.content) ? after.content : {};
  for (const [mediaType, media] of Object.entries(beforeContent)) {
    const part = `request body ${mediaType}`;
    const other = afterContent[mediaType];
    if (other === undefined) {
      changes.push(bodyChange(requestMediaTypeRemoved, head, `media type \`${mediaType}\` removed`, part));
      continue;
    }
    const schemaChanges = diffSchemas(objectAt(media)?.schema, objectAt(other)?.schema, ctx.request);
    changes.push(...inPart(part, schemaChanges).map((c) => ({ ...c, operation: operationLabel(head) })));
  }
  for (const mediaType of Object.keys(afterContent)) {
    if (!(mediaType in beforeContent))
      changes.push(
        bodyChange(requestMediaTypeAdded, head, `media type \`${mediaType}\` added`, `request body ${mediaType}`),
      );
  }
  return changes;
}
