/**
 * Parameters (path, query, header, cookie). Matched by location and name; path
 * parameters by position in the path, since their names are not on the wire; header
 * names case-insensitively. Their schemas are compared as request schemas.
 */
import { defineRule, type Change, type Rule } from "../model.ts";
import {
  listAt,
  objectAt,
  derefObject,
  isObject,
  operationLabel,
  pathParameterNames,
  type Doc,
  type Node,
  type OperationRef,
} from "../openapi.ts";
import { resolveSchema } from "../schema.ts";
import { diffSchemas } from "../schema-diff.ts";
import { wireTextChange } from "./schema/wire-text.ts";
import { declaredBy, inPart, type DiffContext } from "./context.ts";
import { deprecatedRemoval } from "./deprecation.ts";

export const parameterRemoved = defineRule({
  id: "request-parameter-removed",
  level: "ERR",
  breaks: "clients",
  description:
    "A path or cookie parameter was removed, or a query parameter where implementations reject unknown ones (--strict-query-params); clients sending it are rejected.",
});
export const queryParameterRemoved = defineRule({
  id: "request-query-parameter-removed",
  level: "WARN",
  breaks: "clients",
  description:
    "A query parameter was removed; implementations ignore unknown query parameters (without --strict-query-params), so clients sending it silently lose what it did.",
});
export const headerParameterRemoved = defineRule({
  id: "request-header-parameter-removed",
  level: "WARN",
  breaks: "clients",
  description:
    "A header parameter was removed; unknown headers are ignored, so clients sending it silently lose what it did.",
});
export const requiredParameterAdded = defineRule({
  id: "request-parameter-added-required",
  level: "ERR",
  breaks: "clients",
  description: "A new required parameter; every base client omits it.",
});
export const optionalParameterAdded = defineRule({
  id: "request-parameter-added-optional",
  level: "INFO",
  breaks: "none",
  description: "A new optional parameter.",
});
export const parameterBecameRequired = defineRule({
  id: "request-parameter-became-required",
  level: "ERR",
  breaks: "clients",
  description: "An optional parameter became required; clients omitting it are rejected.",
});
export const parameterBecameOptional = defineRule({
  id: "request-parameter-became-optional",
  level: "WARN",
  breaks: "implementations",
  description: "A required parameter became optional; an implementation built on the base rejects requests without it.",
});
export const parameterSerializationChanged = defineRule({
  id: "request-parameter-serialization-changed",
  level: "ERR",
  breaks: "both",
  description: "The parameter's style or explode changed; the same value is written differently on the wire.",
});
export const reservedAllowed = defineRule({
  id: "request-parameter-reserved-allowed",
  level: "WARN",
  breaks: "implementations",
  description:
    "The parameter now allows unencoded reserved characters (allowReserved); an implementation built on the base may misread them.",
});
export const reservedDisallowed = defineRule({
  id: "request-parameter-reserved-disallowed",
  level: "ERR",
  breaks: "clients",
  description:
    "The parameter no longer allows unencoded reserved characters (allowReserved); clients sending them are misread or rejected.",
});
export const parameterDeprecated = defineRule({
  id: "request-parameter-deprecated",
  level: "INFO",
  breaks: "none",
  description: "The parameter is now deprecated.",
});

export const parameterRules = [
  parameterRemoved,
  queryParameterRemoved,
  headerParameterRemoved,
  requiredParameterAdded,
  optionalParameterAdded,
  parameterBecameRequired,
  parameterBecameOptional,
  parameterSerializationChanged,
  reservedAllowed,
  reservedDisallowed,
  parameterDeprecated,
];

interface Parameter {
  key: string;
  name: string;
  in: string;
  required: boolean;
  node: Node;
  component?: string;
}

const DEFAULT_STYLE: Record<string, string> = { path: "simple", query: "form", header: "simple", cookie: "form" };

/** Path-item and operation parameters (the operation's win), keyed for matching. */
export function effectiveParameters(doc: Doc, op: OperationRef): Map<string, Parameter> {
  const result = new Map<string, Parameter>();
  const positions = pathParameterNames(op.path);
  for (const raw of [...listAt(op.pathItem, "parameters"), ...listAt(op.operation, "parameters")]) {
    const { node, name: component } = derefObject(doc, raw);
    if (node === undefined || typeof node.name !== "string") continue;
    const location = String(node.in);
    const key =
      location === "path"
        ? `path#${positions.indexOf(node.name)}`
        : location === "header"
          ? `header:${node.name.toLowerCase()}`
          : `${location}:${node.name}`;
    result.set(key, {
      key,
      name: node.name,
      in: location,
      required: location === "path" || node.required === true,
      node,
      ...(component ? { component } : {}),
    });
  }
  return result;
}

function schemaOf(parameter: Parameter): unknown {
  if (parameter.node.schema !== undefined) return parameter.node.schema;
  const content = parameter.node.content;
  return isObject(content) ? objectAt(Object.values(content)[0])?.schema : undefined;
}

function serialization(parameter: Parameter): string {
  const style = parameter.node.style ?? DEFAULT_STYLE[parameter.in] ?? "";
  const explode = parameter.node.explode ?? style === "form";
  return `style ${style}, explode ${explode}`;
}

function parameterChange(
  rule: Rule,
  op: OperationRef,
  parameter: Parameter,
  message: string,
  side: "base" | "head",
  extra: Partial<Change> = {},
): Change {
  const change: Change = {
    rule,
    message,
    operation: operationLabel(op),
    part: `parameter ${parameter.in} ${parameter.name}`,
    path: [],
    ...extra,
  };
  return declaredBy(
    side === "base" ? parameter.component : undefined,
    side === "head" ? parameter.component : undefined,
    [change],
  )[0]!;
}

/**
 * A form-exploded parameter (`?tag=a&tag=b`, the query default) that turns from one value
 * into an array still accepts the one value: widened, then the items are compared with
 * the old value. The reverse narrows. Other styles change what a comma means: left to
 * the type rule.
 */
function repeatedValues(base: Parameter, head: Parameter, ctx: DiffContext): Change[] | undefined {
  const exploded = (p: Parameter) => serialization(p) === "style form, explode true";
  if (!exploded(base) || !exploded(head)) return undefined;
  const b = resolveSchema(ctx.base, schemaOf(base)).schema;
  const h = resolveSchema(ctx.head, schemaOf(head)).schema;
  const isArray = (s: Node) => s.type === "array" || (s.items !== undefined && s.type === undefined);
  if (isArray(b) === isArray(h)) return undefined;
  if (isArray(h))
    return [
      wireTextChange("widened", "one value → repeated values (form, exploded)"),
      ...diffSchemas(b, h.items, ctx.parameter),
    ];
  return [
    wireTextChange("narrowed", "repeated values → one value (form, exploded)"),
    ...diffSchemas(b.items, h, ctx.parameter),
  ];
}

function removalRule(parameter: Parameter, ctx: DiffContext): Rule {
  if (parameter.in === "header") return headerParameterRemoved;
  if (parameter.in === "query" && !ctx.options.strictQueryParams) return queryParameterRemoved;
  return parameterRemoved;
}

export function checkParameters(base: OperationRef, head: OperationRef, ctx: DiffContext): Change[] {
  const before = effectiveParameters(ctx.base, base);
  const after = effectiveParameters(ctx.head, head);
  const changes: Change[] = [];
  for (const [key, parameter] of before) {
    const other = after.get(key);
    if (other === undefined) {
      const deprecation = deprecatedRemoval("parameter", [parameter.node], ctx.options.date);
      const note = deprecation === undefined ? "" : `; ${deprecation.note}`;
      changes.push(
        parameterChange(
          deprecation?.rule ?? removalRule(parameter, ctx),
          head,
          parameter,
          `${parameter.in} parameter \`${parameter.name}\` removed (was ${parameter.required ? "required" : "optional"}${note})`,
          "base",
        ),
      );
      continue;
    }
    if (!parameter.required && other.required)
      changes.push(
        parameterChange(parameterBecameRequired, head, other, `parameter \`${other.name}\` is now required`, "head"),
      );
    if (parameter.required && !other.required)
      changes.push(
        parameterChange(parameterBecameOptional, head, other, `parameter \`${other.name}\` is now optional`, "head"),
      );
    if (serialization(parameter) !== serialization(other)) {
      changes.push(
        parameterChange(
          parameterSerializationChanged,
          head,
          other,
          `${serialization(parameter)} → ${serialization(other)}`,
          "head",
        ),
      );
    }
    const allowedBefore = parameter.node.allowReserved === true;
    const allowedAfter = other.node.allowReserved === true;
    if (!allowedBefore && allowedAfter)
      changes.push(
        parameterChange(
          reservedAllowed,
          head,
          other,
          `parameter \`${other.name}\` now allows unencoded reserved characters`,
          "head",
        ),
      );
    if (allowedBefore && !allowedAfter)
      changes.push(
        parameterChange(
          reservedDisallowed,
          head,
          other,
          `parameter \`${other.name}\` no longer allows unencoded reserved characters`,
          "head",
        ),
      );
    if (other.node.deprecated === true && parameter.node.deprecated !== true)
      changes.push(parameterChange(parameterDeprecated, head, other, `parameter \`${other.name}\` deprecated`, "head"));
    const part = `parameter ${other.in} ${other.name}`;
    // A `schema` parameter is text on the wire; a `content` one is a serialized document.
    const asText = parameter.node.schema !== undefined && other.node.schema !== undefined;
    const schemaChanges =
      (asText ? repeatedValues(parameter, other, ctx) : undefined) ??
      diffSchemas(schemaOf(parameter), schemaOf(other), asText ? ctx.parameter : ctx.request);
    changes.push(
      ...declaredBy(parameter.component, other.component, inPart(part, schemaChanges)).map((c) => ({
        ...c,
        operation: operationLabel(head),
      })),
    );
  }
  for (const [key, parameter] of after) {
    if (before.has(key)) continue;
    const rule = parameter.required ? requiredParameterAdded : optionalParameterAdded;
    changes.push(
      parameterChange(
        rule,
        head,
        parameter,
        `${parameter.required ? "required" : "optional"} ${parameter.in} parameter \`${parameter.name}\` added`,
        "head",
      ),
    );
  }
  return changes;
}
