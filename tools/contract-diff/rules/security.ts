/**
 * Security: the ways an operation accepts to be called (`security`, or the document's).
 * Each alternative is compared by what the scheme is (type, HTTP scheme, where the key
 * goes, scopes), not by the scheme's name. An alternative removed breaks clients using it
 * (removing "no authentication" is how adding authentication shows); one added must be
 * supported by implementations.
 */
import { defineRule, type Change } from "../model.ts";
import { isObject, objectAt, operationLabel, type Doc, type Node, type OperationRef } from "../openapi.ts";

export const securityAlternativeRemoved = defineRule({
  id: "security-alternative-removed",
  level: "ERR",
  breaks: "clients",
  description:
    "A way to authenticate was removed (or authentication was added, or a scope was required); clients using it are rejected.",
});
export const securityAlternativeAdded = defineRule({
  id: "security-alternative-added",
  level: "WARN",
  breaks: "implementations",
  description: "A new way to authenticate; an implementation built on the base rejects it.",
});

export const securityRules = [securityAlternativeRemoved, securityAlternativeAdded];

function schemeKey(doc: Doc, name: string): string {
  const scheme: Node = objectAt(doc, "components", "securitySchemes", name) ?? {};
  switch (scheme.type) {
    case "http":
      return `http ${String(scheme.scheme ?? "").toLowerCase()}`;
    case "apiKey":
      return `apiKey in ${scheme.in} ${scheme.in === "header" ? String(scheme.name).toLowerCase() : scheme.name}`;
    case "oauth2":
    case "openIdConnect":
      return `${scheme.type} ${scheme.openIdConnectUrl ?? JSON.stringify(scheme.flows ?? {})}`;
    default:
      return `unknown scheme ${name}`;
  }
}

interface Alternative {
  key: string;
  label: string;
}

/** The alternatives an operation accepts; an empty requirement `{}` is "no authentication". */
export function securityAlternatives(doc: Doc, operation: Node): Map<string, Alternative> {
  const requirements: unknown[] = Array.isArray(operation.security)
    ? operation.security
    : Array.isArray(doc.security)
      ? doc.security
      : [];
  const list = requirements.length === 0 ? [{}] : requirements;
  const result = new Map<string, Alternative>();
  for (const requirement of list) {
    const entries = Object.entries(isObject(requirement) ? requirement : {}).map(([name, scopes]) => {
      const scopeList = Array.isArray(scopes) ? [...scopes].map(String).sort() : [];
      const suffix = scopeList.length > 0 ? ` [${scopeList.join(", ")}]` : "";
      return { key: schemeKey(doc, name) + suffix, label: `${name} (${schemeKey(doc, name)})${suffix}` };
    });
    entries.sort((a, b) => a.key.localeCompare(b.key));
    const key = entries.length === 0 ? "none" : entries.map((e) => e.key).join(" + ");
    const label = entries.length === 0 ? "no authentication" : entries.map((e) => e.label).join(" + ");
    result.set(key, { key, label });
  }
  return result;
}

function compareAlternatives(
  before: Map<string, Alternative>,
  after: Map<string, Alternative>,
  location: Partial<Change>,
): Change[] {
  const changes: Change[] = [];
  for (const [key, alternative] of before) {
    if (!after.has(key))
      changes.push({
        rule: securityAlternativeRemoved,
        message: `security \`${alternative.label}\` no longer accepted`,
        path: [],
        before: alternative.label,
        ...location,
      });
  }
  for (const [key, alternative] of after) {
    if (!before.has(key))
      changes.push({
        rule: securityAlternativeAdded,
        message: `security \`${alternative.label}\` now accepted`,
        path: [],
        after: alternative.label,
        ...location,
      });
  }
  return changes;
}

/** The document's `security`, once, for the operations that inherit it on both sides. */
export function checkDocumentSecurity(baseDoc: Doc, headDoc: Doc): Change[] {
  return compareAlternatives(securityAlternatives(baseDoc, {}), securityAlternatives(headDoc, {}), {
    part: "security (every operation without its own)",
  });
}

/** An operation's own `security` (on either side) against the other side's effective one. */
export function checkSecurity(base: OperationRef, head: OperationRef, baseDoc: Doc, headDoc: Doc): Change[] {
  if (!Array.isArray(base.operation.security) && !Array.isArray(head.operation.security)) return [];
  return compareAlternatives(
    securityAlternatives(baseDoc, base.operation),
    securityAlternatives(headDoc, head.operation),
    { operation: operationLabel(head), part: "security" },
  );
}
