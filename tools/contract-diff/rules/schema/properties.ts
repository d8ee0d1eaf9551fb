/**
 * Properties of an object: added, removed, made required or optional.
 *
 * Openness matters (README, "Rules the contract follows": requests open, responses
 * closed):
 * - a property removed from an **open** request is still accepted, only ignored now
 *   (WARN: the client silently loses what it did); from a **closed** one it is rejected (ERR);
 * - an optional property added to an open request is compatible (a base implementation
 *   ignores unknown fields); added to a closed request, a base implementation rejects it;
 * - an optional property added to an open response is compatible; added to a **closed**
 *   response it may break clients that validate against the base contract, which
 *   promised nothing else would appear (WARN: only strict clients break). It does not
 *   break implementations: not sending an optional field stays valid;
 * - a required property added to a response breaks implementations built on the base,
 *   which never send it (ERR).
 */
import { defineRule, type Change, type Rule } from "../../model.ts";
import { isObjectLike, type NormalSchema } from "../../schema.ts";
import type { SchemaRuleSet } from "./check.ts";

const rules = {
  requestRemoved: defineRule({
    id: "request-property-removed",
    level: "WARN",
    breaks: "clients",
    description:
      "Request (open object): a property was removed; clients still sending it are not rejected, but what it did is silently lost.",
  }),
  requestRemovedFromClosed: defineRule({
    id: "request-property-removed-from-closed",
    level: "ERR",
    breaks: "clients",
    description: "Request (closed object): a property was removed; clients sending it are rejected.",
  }),
  requestRequiredAdded: defineRule({
    id: "request-required-property-added",
    level: "ERR",
    breaks: "clients",
    description: "Request: a new required property; every base client omits it and is rejected.",
  }),
  requestOptionalAdded: defineRule({
    id: "request-optional-property-added",
    level: "INFO",
    breaks: "none",
    description: "Request (open object): a new optional property; base implementations already ignore unknown fields.",
  }),
  requestOptionalAddedToClosed: defineRule({
    id: "request-optional-property-added-to-closed",
    level: "WARN",
    breaks: "implementations",
    description:
      "Request (closed object): a new optional property; an implementation built on the base rejects requests that send it.",
  }),
  requestBecameRequired: defineRule({
    id: "request-property-became-required",
    level: "ERR",
    breaks: "clients",
    description: "Request: an optional property became required; clients omitting it are rejected.",
  }),
  requestBecameOptional: defineRule({
    id: "request-property-became-optional",
    level: "WARN",
    breaks: "implementations",
    description:
      "Request: a required property became optional; an implementation built on the base rejects requests without it.",
  }),
  responseRequiredRemoved: defineRule({
    id: "response-required-property-removed",
    level: "ERR",
    breaks: "clients",
    description: "Response: a required property was removed; clients reading it break.",
  }),
  responseOptionalRemoved: defineRule({
    id: "response-optional-property-removed",
    level: "WARN",
    breaks: "clients",
    description: "Response: an optional property was removed; clients that use it when present lose it.",
  }),
  responseRequiredAdded: defineRule({
    id: "response-required-property-added",
    level: "ERR",
    breaks: "implementations",
    description:
      "Response: a new required property; implementations built on the base never send it (and, in a closed object, strict clients of the base reject it).",
  }),
  responseOptionalAdded: defineRule({
    id: "response-optional-property-added",
    level: "INFO",
    breaks: "none",
    description: "Response (open object): a new optional property; clients ignore unknown fields.",
  }),
  responseOptionalAddedToClosed: defineRule({
    id: "response-optional-property-added-to-closed",
    level: "WARN",
    breaks: "clients",
    description:
      "Response (closed object): a new optional property; clients validating against the base, which promised no other property, reject it.",
  }),
  responseBecameOptional: defineRule({
    id: "response-property-became-optional",
    level: "ERR",
    breaks: "clients",
    description: "Response: a required property became optional; clients relying on it find it missing.",
  }),
  responseBecameRequired: defineRule({
    id: "response-property-became-required",
    level: "WARN",
    breaks: "implementations",
    description: "Response: an optional property became required; implementations built on the base may omit it.",
  }),
} satisfies Record<string, Rule>;

function propertyChange(rule: Rule, name: string, message: string): Change {
  return { rule, message, path: [name] };
}

function requestChanges(base: NormalSchema, head: NormalSchema): Change[] {
  const changes: Change[] = [];
  for (const name of base.properties.keys()) {
    if (head.properties.has(name) || head.hidden.has(name)) continue; // became readOnly: access.ts
    const rule = head.openness === "closed" ? rules.requestRemovedFromClosed : rules.requestRemoved;
    changes.push(
      propertyChange(
        rule,
        name,
        `property \`${name}\` removed (was ${base.required.has(name) ? "required" : "optional"})`,
      ),
    );
  }
  for (const name of head.properties.keys()) {
    if (base.properties.has(name)) continue;
    if (head.required.has(name))
      changes.push(propertyChange(rules.requestRequiredAdded, name, `required property \`${name}\` added`));
    else if (base.openness === "closed")
      changes.push(
        propertyChange(
          rules.requestOptionalAddedToClosed,
          name,
          `optional property \`${name}\` added to a closed object`,
        ),
      );
    else changes.push(propertyChange(rules.requestOptionalAdded, name, `optional property \`${name}\` added`));
  }
  for (const name of head.properties.keys()) {
    if (!base.properties.has(name)) continue;
    const was = base.required.has(name);
    const is = head.required.has(name);
    if (!was && is)
      changes.push(propertyChange(rules.requestBecameRequired, name, `property \`${name}\` is now required`));
    if (was && !is)
      changes.push(propertyChange(rules.requestBecameOptional, name, `property \`${name}\` is now optional`));
  }
  return changes;
}

function responseChanges(base: NormalSchema, head: NormalSchema): Change[] {
  const changes: Change[] = [];
  for (const name of base.properties.keys()) {
    if (head.properties.has(name) || head.hidden.has(name)) continue; // became writeOnly: access.ts
    const required = base.required.has(name);
    changes.push(
      propertyChange(
        required ? rules.responseRequiredRemoved : rules.responseOptionalRemoved,
        name,
        `property \`${name}\` removed (was ${required ? "required" : "optional"})`,
      ),
    );
  }
  for (const name of head.properties.keys()) {
    if (base.properties.has(name)) continue;
    if (head.required.has(name))
      changes.push(propertyChange(rules.responseRequiredAdded, name, `required property \`${name}\` added`));
    else if (base.openness === "closed")
      changes.push(
        propertyChange(
          rules.responseOptionalAddedToClosed,
          name,
          `optional property \`${name}\` added to a closed object`,
        ),
      );
    else changes.push(propertyChange(rules.responseOptionalAdded, name, `optional property \`${name}\` added`));
  }
  for (const name of head.properties.keys()) {
    if (!base.properties.has(name)) continue;
    const was = base.required.has(name);
    const is = head.required.has(name);
    if (was && !is)
      changes.push(propertyChange(rules.responseBecameOptional, name, `property \`${name}\` is now optional`));
    if (!was && is)
      changes.push(propertyChange(rules.responseBecameRequired, name, `property \`${name}\` is now required`));
  }
  return changes;
}

export const propertiesRule: SchemaRuleSet = {
  rules: Object.values(rules),
  check(base, head, ctx) {
    if (!isObjectLike(base) || !isObjectLike(head)) return [];
    return ctx.direction === "request" ? requestChanges(base, head) : responseChanges(base, head);
  },
};
