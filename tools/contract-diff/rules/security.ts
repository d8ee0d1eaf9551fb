/**
 * Security: the ways an operation accepts to be called (`security`, or the document's).
 * Each alternative is compared by what the scheme is (type, HTTP scheme, where the key
 * goes), not by the scheme's name, and by meaning: credentials that satisfied a base alternative and satisfy a head one
 * still work (dropping a scope or the whole requirement rejects no client; adding one
 * does). An alternative of the head that no base alternative accepts must be supported by
 * implementations built on the base.
 */
import { defineRule, type Change } from "../model.ts";
import { isObject, objectAt, operationLabel, type Doc, type Node, type OperationRef } from "../openapi.ts";

export const securityAlternativeRemoved = defineRule({
  id: "security-alternative-removed",
  level: "ERR",
  breaks: "clients",
  description: "A way to authenticate was removed (or replaced by another scheme); clients using it are rejected.",
});
export const securityAlternativeAdded = defineRule({
  id: "security-alternative-added",
  level: "WARN",
  breaks: "implementations",
  description: "A new way to authenticate; an implementation built on the base rejects it.",
});
export const securityRequirementAdded = defineRule({
  id: "security-requirement-added",
  level: "ERR",
  breaks: "clients",
  description:
    "Authentication (or one more scheme) is now required where it was not; clients calling without it are rejected.",
});
export const securityRequirementRemoved = defineRule({
  id: "security-requirement-removed",
  level: "WARN",
  breaks: "implementations",
  description:
    "Authentication (or one of the schemes required together) is no longer required; it rejects no client, but an implementation built on the base still demands it.",
});
export const securityScopeAdded = defineRule({
  id: "security-scope-added",
  level: "ERR",
  breaks: "clients",
  description: "A scope is now required; clients whose credentials lack it are rejected.",
});
export const securityScopeRemoved = defineRule({
  id: "security-scope-removed",
  level: "WARN",
  breaks: "implementations",
  description:
    "A scope is no longer required; it rejects no client, but an implementation built on the base still demands it.",
});

export const securityRules = [
  securityAlternativeRemoved,
  securityAlternativeAdded,
  securityRequirementAdded,
  securityRequirementRemoved,
  securityScopeAdded,
  securityScopeRemoved,
];

/** What a scheme is, independent of its name; an OAuth scheme by its flows' kinds and URLs, not its scope list. */
function schemeKey(doc: Doc, name: string): string {
  const scheme: Node = objectAt(doc, "components", "securitySchemes", name) ?? {};
  switch (scheme.type) {
    case "http":
      return `http ${String(scheme.scheme ?? "").toLowerCase()}`;
    case "apiKey":
      return `apiKey in ${scheme.in} ${scheme.in === "header" ? String(scheme.name).toLowerCase() : scheme.name}`;
    case "oauth2": {
      const flows = isObject(scheme.flows) ? scheme.flows : {};
      const urls = Object.entries(flows)
        .map(
          ([kind, flow]) => `${kind} ${isObject(flow) ? `${flow.authorizationUrl ?? ""} ${flow.tokenUrl ?? ""}` : ""}`,
        )
        .sort();
      return `oauth2 ${urls.join("; ")}`;
    }
    case "openIdConnect":
      return `openIdConnect ${scheme.openIdConnectUrl}`;
    case "mutualTLS":
      return "mutualTLS";
    default:
      return `unknown scheme ${name}`;
  }
}

/** One way to authenticate: every scheme it needs together, each with the scopes it needs. */
interface Alternative {
  schemes: Map<string, Set<string>>;
  label: string;
}

/** The alternatives an operation accepts; an empty requirement `{}` is "no authentication". */
export function securityAlternatives(doc: Doc, operation: Node): Alternative[] {
  const requirements: unknown[] = Array.isArray(operation.security)
    ? operation.security
    : Array.isArray(doc.security)
      ? doc.security
      : [];
  const list = requirements.length === 0 ? [{}] : requirements;
  return list.map((requirement) => {
    const schemes = new Map<string, Set<string>>();
    const labels: string[] = [];
    for (const [name, scopes] of Object.entries(isObject(requirement) ? requirement : {})) {
      const scopeList = Array.isArray(scopes) ? scopes.map(String).sort() : [];
      const key = schemeKey(doc, name);
      schemes.set(key, new Set([...(schemes.get(key) ?? []), ...scopeList]));
      labels.push(`${name}${scopeList.length > 0 ? ` [${scopeList.join(", ")}]` : ""}`);
    }
    return { schemes, label: labels.length === 0 ? "no authentication" : labels.sort().join(" + ") };
  });
}

/** Whether credentials that satisfy `held` also satisfy `asked` (same schemes or fewer, same scopes or fewer). */
function satisfies(held: Alternative, asked: Alternative): boolean {
  for (const [scheme, scopes] of asked.schemes) {
    const have = held.schemes.get(scheme);
    if (have === undefined || [...scopes].some((s) => !have.has(s))) return false;
  }
  return true;
}

/** Why `from` (credentials of one side) is not accepted by any alternative of `to`, as the closest rule. */
function shortfall(
  from: Alternative,
  to: Alternative[],
): { kind: "requirement" | "scope" | "alternative"; detail: string } {
  if (from.schemes.size === 0) return { kind: "requirement", detail: "authentication required" };
  for (const other of to) {
    const sameSchemes = [...other.schemes.keys()].every((k) => from.schemes.has(k));
    if (sameSchemes && other.schemes.size === from.schemes.size) {
      const missing = [...other.schemes].flatMap(([k, scopes]) =>
        [...scopes].filter((s) => !from.schemes.get(k)!.has(s)),
      );
      return { kind: "scope", detail: `scope ${missing.map((s) => `\`${s}\``).join(", ")}` };
    }
    if ([...from.schemes.keys()].every((k) => other.schemes.has(k)))
      return { kind: "requirement", detail: "one more scheme required" };
  }
  return { kind: "alternative", detail: "" };
}

/** What an alternative's schemes are, so a scheme kept by name but changed (another header) reads as two. */
function describe(alternative: Alternative): string {
  return alternative.schemes.size === 0 ? "none" : [...alternative.schemes.keys()].sort().join(" + ");
}

function compareAlternatives(before: Alternative[], after: Alternative[], location: Partial<Change>): Change[] {
  const changes: Change[] = [];
  for (const alternative of before) {
    if (after.some((a) => satisfies(alternative, a))) continue;
    const { kind, detail } = shortfall(alternative, after);
    const rule = {
      requirement: securityRequirementAdded,
      scope: securityScopeAdded,
      alternative: securityAlternativeRemoved,
    }[kind];
    const message =
      kind === "alternative"
        ? `security \`${alternative.label}\` (${describe(alternative)}) no longer accepted`
        : `clients using \`${alternative.label}\` now need more: ${detail}`;
    changes.push({ rule, message, path: [], before: alternative.label, ...location });
  }
  for (const alternative of after) {
    if (before.some((b) => satisfies(alternative, b))) continue;
    const { kind, detail } = shortfall(alternative, before);
    const rule = {
      requirement: securityRequirementRemoved,
      scope: securityScopeRemoved,
      alternative: securityAlternativeAdded,
    }[kind];
    const message =
      kind === "alternative"
        ? `security \`${alternative.label}\` (${describe(alternative)}) now accepted`
        : `\`${alternative.label}\` now suffices; the base also asked for more (${detail === "authentication required" ? "authentication" : detail})`;
    changes.push({ rule, message, path: [], after: alternative.label, ...location });
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
