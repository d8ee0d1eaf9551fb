/** Response headers: removed, added, required or not, and their schemas (as response schemas). */
import { defineRule, type Change, type Rule } from "../model.ts";
import { derefObject, isObject, type Doc, type Node } from "../openapi.ts";
import { diffSchemas } from "../schema-diff.ts";
import { declaredBy, inPart, type DiffContext } from "./context.ts";

export const requiredHeaderRemoved = defineRule({
  id: "response-required-header-removed",
  level: "ERR",
  breaks: "clients",
  description: "A required response header was removed; clients reading it break.",
});
export const optionalHeaderRemoved = defineRule({
  id: "response-optional-header-removed",
  level: "WARN",
  breaks: "clients",
  description: "An optional response header was removed; clients using it when present lose it.",
});
export const headerBecameOptional = defineRule({
  id: "response-header-became-optional",
  level: "ERR",
  breaks: "clients",
  description: "A required response header became optional; clients relying on it find it missing.",
});
export const headerBecameRequired = defineRule({
  id: "response-header-became-required",
  level: "WARN",
  breaks: "implementations",
  description: "An optional response header became required; implementations built on the base may omit it.",
});
export const requiredHeaderAdded = defineRule({
  id: "response-required-header-added",
  level: "ERR",
  breaks: "implementations",
  description: "A new required response header; implementations built on the base never send it.",
});
export const optionalHeaderAdded = defineRule({
  id: "response-optional-header-added",
  level: "INFO",
  breaks: "none",
  description: "A new optional response header.",
});

export const headerRules = [
  requiredHeaderRemoved,
  optionalHeaderRemoved,
  headerBecameOptional,
  headerBecameRequired,
  requiredHeaderAdded,
  optionalHeaderAdded,
];

interface Header {
  name: string;
  node: Node;
  component?: string;
}

/** Headers by lower-cased name (header names are case-insensitive). */
function headersOf(doc: Doc, response: Node): Map<string, Header> {
  const result = new Map<string, Header>();
  for (const [name, raw] of Object.entries(isObject(response.headers) ? response.headers : {})) {
    const { node, name: component } = derefObject(doc, raw);
    if (node !== undefined) result.set(name.toLowerCase(), { name, node, ...(component ? { component } : {}) });
  }
  return result;
}

function headerChange(rule: Rule, part: string, message: string): Change {
  return { rule, message, part, path: [] };
}

/** `responsePart` names the response ("response 200"). */
export function checkResponseHeaders(base: Node, head: Node, responsePart: string, ctx: DiffContext): Change[] {
  const before = headersOf(ctx.base, base);
  const after = headersOf(ctx.head, head);
  const changes: Change[] = [];
  for (const [key, header] of before) {
    const part = `${responsePart} header ${header.name}`;
    const other = after.get(key);
    const wasRequired = header.node.required === true;
    if (other === undefined) {
      changes.push(
        headerChange(
          wasRequired ? requiredHeaderRemoved : optionalHeaderRemoved,
          part,
          `header \`${header.name}\` removed (was ${wasRequired ? "required" : "optional"})`,
        ),
      );
      continue;
    }
    const isRequired = other.node.required === true;
    if (wasRequired && !isRequired)
      changes.push(headerChange(headerBecameOptional, part, `header \`${header.name}\` is now optional`));
    if (!wasRequired && isRequired)
      changes.push(headerChange(headerBecameRequired, part, `header \`${header.name}\` is now required`));
    changes.push(
      ...declaredBy(
        header.component,
        other.component,
        inPart(part, diffSchemas(header.node.schema, other.node.schema, ctx.response)),
      ),
    );
  }
  for (const [key, header] of after) {
    if (before.has(key)) continue;
    const required = header.node.required === true;
    changes.push(
      headerChange(
        required ? requiredHeaderAdded : optionalHeaderAdded,
        `${responsePart} header ${header.name}`,
        `${required ? "required" : "optional"} header \`${header.name}\` added`,
      ),
    );
  }
  return changes;
}
