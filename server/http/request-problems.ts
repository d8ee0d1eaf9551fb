/**
 * A request the contract refuses gets one 400 whose `param` is the first problem; its
 * message names the others too, so that a person fixes them in one go instead of one per
 * call, and says why where a rule needs saying (`store`).
 *
 * The validator stops at the first failure, as it must on untrusted input (collecting
 * every error of a hostile body is a denial-of-service risk: AJV's own advice). The other
 * problems are found here, on the failure path only and only for bodies of a modest size,
 * by a second validator over the same contract that collects every error; then the
 * service's own checks of the same request that the contract cannot make (a model that
 * does not exist) are asked, through `RequestProblems`.
 */
import type { ErrorObject, ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { NextFunction, Request, Response } from "express";
import { contractDocument } from "./contract.ts";
import type { Operation } from "./operations.ts";
import { invalidRequest, isInvalidRequest, mostSpecific, paramOf, type ValidatorItem } from "./validation.ts";

/** One problem of a request: where (`temperature`, `config.epochs`) and what (`must be <= 2`). */
export interface Problem {
  param: string;
  text: string;
}

/** The service's own problems with a refused request; [] when none. */
export type RequestProblems = (req: Request, res: Response) => Promise<Problem[]>;

/** Bodies larger than this are refused with their first problem only. */
const MAX_EXPLAINED_BYTES = 64 * 1024;
/** At most this many further problems are named. */
const MAX_OTHERS = 8;

/** Why a rule is so, by operation and param: said after the problem. */
const HINTS: Record<string, Record<string, string>> = {
  // Client libraries omit `store` by default; the hint names each one's option (README, "With other clients").
  createResponse: {
    store:
      'this service keeps no state: send "store": false; in the Vercel AI SDK providerOptions: { openai: { store: false } }, in LangChain\'s ChatOpenAI zdrEnabled: true, in the OpenAI Agents SDK modelSettings: { store: false } (README, "With other clients")',
  },
};

/** Error middleware, right after the validator: rewrites its 400 to name every problem. */
export function explainRefusedRequests(serviceProblems?: RequestProblems) {
  return async (error: unknown, req: Request, res: Response, next: NextFunction): Promise<void> => {
    if (!isInvalidRequest(error)) return next(error);
    const items: ValidatorItem[] = error.errors ?? [];
    const operation = res.locals.pathMatch?.operation;
    const firstPath = mostSpecific(items)?.path;
    const first = paramOf(firstPath ?? "");
    const hints = HINTS[operation?.operationId ?? ""] ?? {};
    const withHint = (param: string | null, text: string) =>
      param !== null && hints[param] ? `${text} (${hints[param]})` : text;
    const others = [
      ...otherBodyProblems(req, operation, firstPath),
      ...(await serviceProblemsOf(serviceProblems, req, res)),
    ]
      .slice(0, MAX_OTHERS)
      .map(({ param, text }) => withHint(param, `${param}: ${text}`));
    next(invalidRequest(items, { ...(first !== null && hints[first] ? { hint: hints[first] } : {}), others }));
  };
}

async function serviceProblemsOf(
  serviceProblems: RequestProblems | undefined,
  req: Request,
  res: Response,
): Promise<Problem[]> {
  if (serviceProblems === undefined || res.locals.caller === undefined) return [];
  try {
    return await serviceProblems(req, res);
  } catch {
    return []; // the first problem is the answer; the rest is a courtesy
  }
}

/**
 * The body's problems besides the first one: each failing place (a field, or a field of a
 * nested object such as `config.epochs`) with all that is said of it. In a field that is
 * a union (`input`), the branches it did not match fail too: only its most specific
 * failure is said, as for the first problem.
 */
function otherBodyProblems(req: Request, operation: Operation | undefined, firstPath: string | undefined): Problem[] {
  const length = Number(req.headers["content-length"]);
  if (operation === undefined || !operation.takesJson || typeof req.body !== "object" || req.body === null) return [];
  if (!(Number.isFinite(length) && length <= MAX_EXPLAINED_BYTES)) return [];
  const validate = bodyValidator(operation);
  if (validate === undefined || validate(req.body)) return [];
  const byField = new Map<string, BodyItem[]>();
  for (const item of (validate.errors ?? []).map(toItem)) {
    const field = item.path.split("/")[2];
    if (field === undefined || field === "") continue; // the body as a whole: the first problem says it
    const same = byField.get(field);
    if (same) same.push(item);
    else byField.set(field, [item]);
  }
  const related = (a: string, b: string) => a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
  const problems: Problem[] = [];
  for (const items of byField.values()) {
    const union = items.some((i) => i.keyword === "anyOf" || i.keyword === "oneOf");
    const places = union
      ? [mostSpecific(items)?.path ?? ""]
      : [...new Set(items.map((i) => i.path))].filter((p, _, all) => !all.some((q) => q.startsWith(`${p}/`)));
    for (const place of places) {
      if (firstPath !== undefined && related(place, firstPath)) continue;
      const specific = mostSpecific(union ? items : items.filter((i) => i.path === place));
      const param = specific && paramOf(specific.path);
      if (specific && param) problems.push({ param, text: specific.text });
    }
  }
  return problems;
}

interface BodyItem extends ValidatorItem {
  path: string;
  keyword: string;
}

/** An AJV error as the validator reports one: a pointer under /body; a missing property is its own place. */
function toItem(error: ErrorObject): BodyItem {
  const missing =
    error.keyword === "required" ? `/${String((error.params as { missingProperty?: string }).missingProperty)}` : "";
  return {
    path: `/body${error.instancePath}${missing}`,
    message: error.keyword === "required" ? "must have required property" : error.message,
    keyword: error.keyword,
  };
}

let ajv: InstanceType<typeof Ajv2020> | undefined;
const validators = new Map<string, ValidateFunction | undefined>();

/** The operation's JSON body schema, compiled once, collecting every error. */
function bodyValidator(operation: Operation): ValidateFunction | undefined {
  const key = `${operation.method} ${operation.template}`;
  if (validators.has(key)) return validators.get(key);
  if (ajv === undefined) {
    // Formats are the validator's business; this pass only finds the other fields that fail.
    ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false, validateFormats: false });
    ajv.addSchema(contractDocument(), "contract");
  }
  const pointer = [
    "paths",
    operation.template,
    operation.method,
    "requestBody",
    "content",
    "application/json",
    "schema",
  ]
    .map((s) => encodeURIComponent(s.replace(/~/g, "~0").replace(/\//g, "~1")))
    .join("/");
  let validate: ValidateFunction | undefined;
  try {
    validate = ajv.compile({ $ref: `contract#/${pointer}` });
  } catch {
    validate = undefined; // a schema this pass cannot compile: the first problem alone is said
  }
  validators.set(key, validate);
  return validate;
}
