/**
 * The contract's operations as a lookup table: which operation a method and path name,
 * with what authentication needs to know about it (which key headers it accepts, whether
 * it is scoped to a path account) and its path parameters.
 *
 * Authentication runs before the validator, so it cannot use the validator's own match.
 * A path that several templates match (`/datasets/{dataset}` and `/datasets/{dataset}:upload`)
 * is resolved like express does: the template that has the request's method wins.
 *
 * The templates are kept as a tree of path segments, so a lookup is one map hit per
 * literal segment (`accounts`, `datasets`) rather than a regular expression per template.
 */
import type { RequestHandler } from "express";
import { BASE_PATH, contractDocument, isObject, resolveRef } from "./contract.ts";
import type { JsonObject } from "./contract.ts";

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;

export interface Operation {
  operationId: string;
  /** Lower case, as in the contract. */
  method: string;
  /** The contract's path template, without the base path: `/accounts/{account}/dpoJobs/{job}:cancel`. */
  template: string;
  /** No security requirement at all: the operation is public. */
  public: boolean;
  /** Names of the apiKey headers its security accepts besides `Authorization: Bearer` (e.g. `x-api-key`). */
  apiKeyHeaders: string[];
  /** Top-level request body fields the contract marks **Not supported.** (e.g. `previous_response_id`). */
  notSupportedFields: string[];
  /** Whether its request body may be JSON (`application/json`); other bodies are never parsed here. */
  takesJson: boolean;
}

/** What a request path matched: the operation for its method, or none (a 405). */
export interface PathMatch {
  template: string;
  /** Decoded path parameters. */
  params: Record<string, string>;
  operation: Operation | undefined;
  /** The methods the path has, upper case, for the Allow header of a 405. */
  allowedMethods: readonly string[];
}

interface PathEntry {
  template: string;
  paramNames: string[];
  operations: Map<string, Operation>;
  /** Made once, not on every request: the literal characters of the template (which of two matches wins) and the Allow list. */
  literalLength: number;
  allowedMethods: readonly string[];
}

/**
 * One segment position of the templates: the literal segments that may follow (`datasets`,
 * `dpoJobs:estimateCost`), and the parameter segments, each with the literal text after its
 * parameter (`{job}:cancel` has `:cancel`, `{job}` has ``), longest first.
 */
interface SegmentNode {
  literals: Map<string, SegmentNode>;
  params: { suffix: string; next: SegmentNode }[];
  /** The template that ends here. */
  entry?: PathEntry;
}

export class OperationTable {
  readonly #paths: PathEntry[];
  readonly #root: SegmentNode;

  constructor(doc: JsonObject = contractDocument()) {
    this.#paths = readPaths(doc);
    this.#root = segmentTree(this.#paths);
  }

  /** All operations, for checks over the whole contract. */
  get operations(): Operation[] {
    return this.#paths.flatMap((p) => [...p.operations.values()]);
  }

  /** Matches a full request path (`/v1/...`); undefined when no path of the contract matches. */
  match(method: string, requestPath: string): PathMatch | undefined {
    if (!requestPath.startsWith(`${BASE_PATH}/`)) return undefined;
    // A trailing slash is allowed, as express (non-strict routing) and the validator allow it.
    const path = requestPath.endsWith("/")
      ? requestPath.slice(BASE_PATH.length, -1)
      : requestPath.slice(BASE_PATH.length);
    const candidates: Candidate[] = [];
    collectMatches(this.#root, path.split("/").slice(1), 0, [], candidates);
    const lower = method.toLowerCase();
    // Most literal characters first, so `/x/{id}:cancel` is preferred to `/x/{id}`.
    if (candidates.length > 1) candidates.sort((a, b) => b.entry.literalLength - a.entry.literalLength);
    const chosen = candidates.find((c) => c.entry.operations.has(lower)) ?? candidates[0];
    if (!chosen) return undefined;
    const { entry, values } = chosen;
    const params: Record<string, string> = {};
    entry.paramNames.forEach((name, i) => (params[name] = decodeSegment(values[i] ?? "")));
    return {
      template: entry.template,
      params,
      operation: entry.operations.get(lower),
      allowedMethods: entry.allowedMethods,
    };
  }
}

interface Candidate {
  entry: PathEntry;
  /** The raw (still encoded) parameter values, in template order. */
  values: string[];
}

/** Every template that matches `segments` from `index` on (a literal and a parameter may both fit one segment). */
function collectMatches(
  node: SegmentNode,
  segments: string[],
  index: number,
  values: string[],
  found: Candidate[],
): void {
  if (index === segments.length) {
    if (node.entry) found.push({ entry: node.entry, values });
    return;
  }
  const segment = segments[index] as string;
  const literal = node.literals.get(segment);
  if (literal) collectMatches(literal, segments, index + 1, values, found);
  for (const { suffix, next } of node.params) {
    // A parameter takes at least one character, as `[^/]+` did.
    if (segment.length > suffix.length && segment.endsWith(suffix)) {
      collectMatches(next, segments, index + 1, [...values, segment.slice(0, segment.length - suffix.length)], found);
    }
  }
}

function segmentTree(paths: PathEntry[]): SegmentNode {
  const root: SegmentNode = { literals: new Map(), params: [] };
  for (const entry of paths) {
    let node = root;
    for (const segment of entry.template.split("/").slice(1)) node = childFor(node, segment);
    node.entry = entry;
  }
  return root;
}

/** `{job}:cancel` is a parameter segment with the suffix `:cancel`; a text before a parameter is not used by the contract. */
function childFor(node: SegmentNode, segment: string): SegmentNode {
  const param = /^\{[^}]+\}(.*)$/.exec(segment);
  if (param === null) {
    if (segment.includes("{")) throw new Error(`Unsupported path segment in the contract: ${segment}`);
    let next = node.literals.get(segment);
    if (next === undefined) node.literals.set(segment, (next = { literals: new Map(), params: [] }));
    return next;
  }
  const suffix = param[1] as string;
  if (suffix.includes("{")) throw new Error(`Unsupported path segment in the contract: ${segment}`);
  let child = node.params.find((p) => p.suffix === suffix);
  if (child === undefined) {
    child = { suffix, next: { literals: new Map(), params: [] } };
    node.params.push(child);
    node.params.sort((a, b) => b.suffix.length - a.suffix.length);
  }
  return child.next;
}

/** Middleware: leaves the request's match in `res.locals.pathMatch` for the layers after it. */
export function matchOperation(table: OperationTable): RequestHandler {
  return (req, res, next) => {
    res.locals.pathMatch = table.match(req.method, req.path);
    next();
  };
}

function readPaths(doc: JsonObject): PathEntry[] {
  const paths = isObject(doc.paths) ? doc.paths : {};
  const entries = Object.entries(paths).map(([template, item]) => pathEntry(doc, template, item));
  // Most literal characters first, so `/x/{id}:cancel` is tried before `/x/{id}`.
  return entries.sort((a, b) => literalLength(b.template) - literalLength(a.template));
}

function pathEntry(doc: JsonObject, template: string, item: unknown): PathEntry {
  const paramNames = [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);
  const operations = new Map<string, Operation>();
  for (const method of METHODS) {
    const op = isObject(item) ? item[method] : undefined;
    if (isObject(op)) operations.set(method, readOperation(doc, template, method, op));
  }
  return {
    template,
    paramNames,
    operations,
    literalLength: literalLength(template),
    allowedMethods: [...operations.keys()].map((m) => m.toUpperCase()),
  };
}

function readOperation(doc: JsonObject, template: string, method: string, op: JsonObject): Operation {
  const security = (
    Array.isArray(op.security) ? op.security : Array.isArray(doc.security) ? doc.security : []
  ) as unknown[];
  return {
    operationId: typeof op.operationId === "string" ? op.operationId : `${method} ${template}`,
    method,
    template,
    public: security.length === 0,
    apiKeyHeaders: apiKeyHeadersOf(doc, security),
    notSupportedFields: notSupportedFieldsOf(doc, op),
    takesJson: isObject(jsonContentOf(doc, op)),
  };
}

function apiKeyHeadersOf(doc: JsonObject, security: unknown[]): string[] {
  const schemes =
    isObject(doc.components) && isObject(doc.components.securitySchemes) ? doc.components.securitySchemes : {};
  const names = security.flatMap((requirement) => (isObject(requirement) ? Object.keys(requirement) : []));
  return names.flatMap((name) => {
    const scheme = resolveRef(doc, schemes[name]);
    return scheme?.type === "apiKey" && scheme.in === "header" && typeof scheme.name === "string"
      ? [scheme.name.toLowerCase()]
      : [];
  });
}

/** The `application/json` entry of the operation's request body, if it has one. */
function jsonContentOf(doc: JsonObject, op: JsonObject): unknown {
  const body = resolveRef(doc, op.requestBody);
  return isObject(body?.content) ? body.content["application/json"] : undefined;
}

function notSupportedFieldsOf(doc: JsonObject, op: JsonObject): string[] {
  const json = jsonContentOf(doc, op);
  const schema = resolveRef(doc, isObject(json) ? json.schema : undefined);
  const properties = isObject(schema?.properties) ? schema.properties : {};
  return Object.entries(properties)
    .filter(([, property]) => isObject(property) && String(property.description ?? "").startsWith("**Not supported.**"))
    .map(([name]) => name);
}

/** A malformed escape (`%zz`) is kept as sent rather than failing the request here. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function literalLength(template: string): number {
  return template.replace(/\{[^}]+\}/g, "").length;
}
