/**
 * Which operation of the contract a request is, through the kit's own lookup
 * (`Contract.findOperation`), so that a fault names the operations it acts on by their
 * operationId instead of re-typing the contract's paths as regular expressions. The ids
 * are typed against the generated `operations`: a renamed operation fails the type check.
 */
import type { operations } from "../../generated/api.d.ts";
import { Contract, type Operation } from "../contract.ts";
import type { ProxyRequest } from "./proxy.ts";

export type OperationId = keyof operations;

let loaded: Contract | undefined;
/** Loaded on first use: the catalogue's modules are imported by callers that never match a request. */
function contract(): Contract {
  loaded ??= Contract.load();
  return loaded;
}

let base: string | undefined;
/** The path every operation sits under: the contract's server URL without its `{origin}` ("/v1"). */
function basePath(): string {
  const url = contract().at("/servers/0/url");
  base ??= (typeof url === "string" ? url : "").replace(/^\{origin\}/, "");
  return base;
}

/** The request's path relative to `{base_url}`; undefined when it is not under it. */
export function apiPath(request: Pick<ProxyRequest, "path">): string | undefined {
  const prefix = basePath();
  if (!request.path.startsWith(`${prefix}/`)) return undefined;
  return request.path.slice(prefix.length);
}

/** The operation a request is (method and path); undefined for a path or method the contract lacks. */
export function operationOf(request: Pick<ProxyRequest, "method" | "path">): Operation | undefined {
  const path = apiPath(request);
  return path === undefined ? undefined : contract().findOperation(request.method, path);
}

/** The request is one of these operations. */
export function isOperation(request: Pick<ProxyRequest, "method" | "path">, ...ids: OperationId[]): boolean {
  const id = operationOf(request)?.id;
  return id !== undefined && (ids as string[]).includes(id);
}

/** The request's path is the path of one of these operations, whatever its method (a 405 included). */
export function isAtPathOf(request: Pick<ProxyRequest, "path">, ...ids: OperationId[]): boolean {
  const path = apiPath(request);
  if (path === undefined) return false;
  return contract()
    .operationsAtPath(path)
    .some((op) => (ids as string[]).includes(op.id));
}

/** The request's path is under `/accounts/{account}`: the path of an operation scoped to an account. */
export function isAccountScoped(request: Pick<ProxyRequest, "path">): boolean {
  const path = apiPath(request);
  return (
    path !== undefined &&
    contract()
      .operationsAtPath(path)
      .some((op) => op.template.startsWith("/accounts/"))
  );
}

/**
 * The path parameters of a request by the names of the operation's template
 * (`{account}`, `{job}`, …), decoded; empty when the request is none of the contract's.
 */
export function pathParams(request: Pick<ProxyRequest, "path">): Record<string, string> {
  const path = apiPath(request);
  const op = path === undefined ? undefined : contract().operationsAtPath(path)[0];
  const values = op && path !== undefined ? op.regex.exec(path)?.slice(1) : undefined;
  if (!op || !values) return {};
  const names = [...op.template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);
  return Object.fromEntries(names.map((name, i) => [name, decoded(values[i] ?? "")]));
}

/** A path segment decoded; as sent when its escapes are malformed (a fault must not throw on it). */
function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The operations of both job collections, by what they do. */
export const JOB_OPERATIONS = {
  list: ["listSupervisedFineTuningJobs", "listDpoJobs"],
  create: ["createSupervisedFineTuningJob", "createDpoJob"],
  get: ["getSupervisedFineTuningJob", "getDpoJob"],
  cancel: ["cancelSupervisedFineTuningJob", "cancelDpoJob"],
  metrics: ["getSupervisedFineTuningJobMetrics", "getDpoJobMetrics"],
  estimate: ["estimateSupervisedFineTuningJobCost", "estimateDpoJobCost"],
} as const satisfies Record<string, readonly OperationId[]>;

/** The three lists (both job collections and datasets): paging and filters work alike on them. */
export const LIST_OPERATIONS = [...JOB_OPERATIONS.list, "listDatasets"] as const satisfies readonly OperationId[];

/** The inference operations (what x-provider-class and x-config-version are on). */
export const INFERENCE_OPERATIONS = [
  "createResponse",
  "createChatCompletion",
  "createCompletion",
  "createMessage",
] as const satisfies readonly OperationId[];

/** The collection a request's operation is in (`supervisedFineTuningJobs`, `dpoJobs`, `datasets`); undefined outside one. */
export function collectionOf(request: Pick<ProxyRequest, "path">): string | undefined {
  const path = apiPath(request);
  const template = path === undefined ? undefined : contract().operationsAtPath(path)[0]?.template;
  return template?.startsWith("/accounts/{account}/") ? template.split(/[/:]/)[3] : undefined;
}
