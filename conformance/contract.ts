/**
 * The contract as the kit sees it: generated/openapi.3.2.yaml, compiled once with the
 * kit's own ajv (JSON Schema 2020-12, independent of the server's validator). Finds the
 * operation of a request by method and path template, the response by status and media
 * type, and validates bodies, declared headers and each SSE event against the
 * `itemSchema` branch whose `event` const names it.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { ErrorObject, ValidateFunction } from "ajv";
import { parse as parseYaml } from "yaml";
import {
  childOf,
  HTTP_METHODS,
  isOpenApiDocument,
  isSchemaNode,
  pointerSegments,
  type OpenApiDocument,
  type OperationObject,
  type ResponseObject,
  type SchemaNode,
} from "./openapi.ts";

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** Where the contract is: beside the kit in the repository (`../generated`) or in the package. */
export function defaultContractPath(): string {
  const candidates = [path.join(HERE, "../generated/openapi.3.2.yaml"), path.join(HERE, "generated/openapi.3.2.yaml")];
  return candidates.find((p) => existsSync(p)) ?? (candidates[0] as string);
}

export interface Operation {
  id: string;
  method: string;
  /** The path template relative to `{base_url}`, e.g. `/accounts/{account}/dpoJobs/{job}:cancel`. */
  template: string;
  /** Declared response statuses, as strings ("200", "400", …). */
  statuses: string[];
  pointer: string;
  spec: OperationObject;
  regex: RegExp;
  literalLength: number;
}

export interface ContractProblem {
  message: string;
  /** Where in the response (body path, header, event index). */
  at?: string;
  received?: unknown;
}

export interface SseEvent {
  /** The `event:` field, undefined when the event had none (SSE then calls it `message`). */
  event: string | undefined;
  data: string;
  /** The data parsed as JSON; undefined when it is not JSON. */
  json: unknown;
  id?: string | undefined;
}

export class Contract {
  readonly document: OpenApiDocument;
  readonly operations: Operation[];
  readonly errorCodes: string[];
  readonly errorTypes: string[];
  readonly version: string;
  readonly #ajv: InstanceType<typeof Ajv2020>;
  readonly #cache = new Map<string, ValidateFunction>();

  constructor(document: OpenApiDocument) {
    this.document = document;
    this.version = String(document.info?.version ?? "");
    this.#ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false, validateFormats: true });
    addFormats(this.#ajv);
    this.#ajv.addSchema(document, "contract");
    this.operations = [];
    for (const [template, item] of Object.entries(document.paths ?? {})) {
      for (const method of HTTP_METHODS) {
        const spec = item[method];
        if (!spec) continue;
        const literal = template.replace(/\{[^}]+\}/g, "");
        this.operations.push({
          id: spec.operationId ?? `${method.toUpperCase()} ${template}`,
          method: method.toUpperCase(),
          template,
          statuses: Object.keys(spec.responses ?? {}),
          pointer: `/paths/${escapePointer(template)}/${method}`,
          spec,
          regex: templateRegex(template),
          literalLength: literal.length,
        });
      }
    }
    this.errorCodes = stringsOf(document.components?.schemas?.ErrorCode?.enum);
    this.errorTypes = stringsOf(document.components?.schemas?.ErrorType?.enum);
  }

  static load(file = defaultContractPath()): Contract {
    const document: unknown = parseYaml(readFileSync(file, "utf8"), { maxAliasCount: -1 });
    if (!isOpenApiDocument(document)) throw new Error(`${file} is not an OpenAPI document (no paths object)`);
    return new Contract(document);
  }

  /** The operation of a method and a path relative to `{base_url}` (query ignored); undefined when none. */
  findOperation(method: string, requestPath: string): Operation | undefined {
    const p = requestPath.split("?")[0] as string;
    const candidates = this.operations.filter((op) => op.method === method.toUpperCase() && op.regex.test(p));
    candidates.sort((a, b) => b.literalLength - a.literalLength);
    return candidates[0];
  }

  /** Operations whose path matches, whatever the method (to tell 404 from 405). */
  operationsAtPath(requestPath: string): Operation[] {
    const p = requestPath.split("?")[0] as string;
    return this.operations.filter((op) => op.regex.test(p));
  }

  /**
   * Checks a response against its operation: the status is declared, the media type is
   * declared, required headers are present and valid, and the JSON body validates.
   */
  validateResponse(
    op: Operation,
    status: number,
    headers: Headers,
    body: { text: string; json: unknown; isJson: boolean },
  ): ContractProblem[] {
    const problems: ContractProblem[] = [];
    const response = op.spec.responses?.[String(status)] ?? op.spec.responses?.default;
    if (!response) {
      problems.push({
        message: `status ${status} is not declared for ${op.method} ${op.template} (declared: ${op.statuses.join(", ")})`,
        at: "status",
        received: status,
      });
      return problems;
    }
    const responsePointer = `${op.pointer}/responses/${op.spec.responses?.[String(status)] ? status : "default"}`;
    problems.push(...this.validateHeaders(response, headers));
    const content = response.content ?? {};
    const mediaTypes = Object.keys(content);
    if (mediaTypes.length === 0) return problems;
    const received = (headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
    if (!mediaTypes.includes(received)) {
      problems.push({
        message: `content type ${JSON.stringify(received)} is not declared for ${status} (declared: ${mediaTypes.join(", ")})`,
        at: "headers.content-type",
        received,
      });
      return problems;
    }
    if (received === "text/event-stream") return problems; // validated event by event
    if (received === "application/json") {
      if (!body.isJson) {
        problems.push({ message: "the body is not JSON", at: "body", received: body.text.slice(0, 200) });
        return problems;
      }
      const schemaPointer = `${responsePointer}/content/${escapePointer(received)}/schema`;
      problems.push(...this.validateAt(schemaPointer, body.json, "body"));
    }
    return problems;
  }

  /** Required headers present; every declared header that is present matches its schema. */
  validateHeaders(response: ResponseObject, headers: Headers): ContractProblem[] {
    const problems: ContractProblem[] = [];
    for (const [name, spec] of Object.entries(response.headers ?? {})) {
      const value = headers.get(name);
      if (value === null) {
        if (spec.required)
          problems.push({ message: `required header ${name} is missing`, at: `headers.${name.toLowerCase()}` });
        continue;
      }
      const schema = this.resolve(spec.schema ?? {});
      const problem = checkHeaderValue(value, schema);
      if (problem)
        problems.push({ message: `header ${name}: ${problem}`, at: `headers.${name.toLowerCase()}`, received: value });
    }
    return problems;
  }

  /** The itemSchema branches of an operation's streamed 200 response; undefined when it does not stream. */
  streamBranches(
    op: Operation,
    status = 200,
  ): { event: string | undefined; requiresEvent: boolean; dataConst?: string; pointer?: string }[] | undefined {
    const item = op.spec.responses?.[String(status)]?.content?.["text/event-stream"]?.itemSchema;
    if (!item) return undefined;
    const base = `${op.pointer}/responses/${status}/content/text~1event-stream/itemSchema`;
    return (item.oneOf ?? []).map((branch, i) => {
      const event = branch.properties?.event?.const;
      const data = branch.properties?.data ?? {};
      return {
        event: typeof event === "string" ? event : undefined,
        requiresEvent: Array.isArray(branch.required) && branch.required.includes("event"),
        ...(typeof data.const === "string" ? { dataConst: data.const } : {}),
        ...(data.contentSchema ? { pointer: `${base}/oneOf/${i}/properties/data/contentSchema` } : {}),
      };
    });
  }

  /** Validates one SSE event of an operation's stream against the branch its event name selects. */
  validateEvent(op: Operation, event: SseEvent, index: number): ContractProblem[] {
    const branches = this.streamBranches(op);
    if (!branches)
      return [{ message: `${op.method} ${op.template} does not declare an event stream`, at: `events[${index}]` }];
    const name = event.event ?? "message";
    const named = branches.filter((b) => b.event === name);
    if (named.length === 0 && event.event === undefined)
      return [
        {
          message: `an event without an \`event:\` line (SSE calls it "message") is not an event of ${op.template}; each must name itself`,
          at: `events[${index}].event`,
        },
      ];
    if (named.length === 0)
      return [
        {
          message: `event ${JSON.stringify(name)} is not an event of ${op.template} (allowed: ${[...new Set(branches.map((b) => b.event))].join(", ")})`,
          at: `events[${index}].event`,
          received: name,
        },
      ];
    const exact = named.find((b) => b.dataConst !== undefined && b.dataConst === event.data);
    if (exact) {
      if (exact.requiresEvent && event.event === undefined)
        return [
          { message: `event without an \`event:\` line; it must be \`event: ${name}\``, at: `events[${index}].event` },
        ];
      return [];
    }
    const branch = named.find((b) => b.pointer !== undefined);
    if (!branch)
      return [
        {
          message: `data ${JSON.stringify(event.data.slice(0, 60))} is not allowed for event ${name}`,
          at: `events[${index}].data`,
          received: event.data,
        },
      ];
    const problems: ContractProblem[] = [];
    if (branch.requiresEvent && event.event === undefined)
      problems.push({
        message: `event without an \`event:\` line; it must be \`event: ${name}\``,
        at: `events[${index}].event`,
      });
    if (event.json === undefined) {
      problems.push({ message: "data is not JSON", at: `events[${index}].data`, received: event.data.slice(0, 200) });
      return problems;
    }
    problems.push(...this.validateAt(branch.pointer as string, event.json, `events[${index}].data`));
    return problems;
  }

  /** Validates a value against the schema at a JSON pointer of the document. */
  validateAt(pointer: string, value: unknown, at: string): ContractProblem[] {
    const validate = this.#compile(pointer);
    if (validate(value)) return [];
    return simplifyErrors(validate.errors ?? []).map((e) => {
      const plain = plainSchemaError(e);
      return {
        message: plain.message,
        at: `${at}${pointerToPath(plain.pointer)}`,
        received: pick(value, plain.pointer),
      };
    });
  }

  /** Validates against a named component schema. */
  validateSchema(name: string, value: unknown, at = "body"): ContractProblem[] {
    return this.validateAt(`/components/schemas/${escapePointer(name)}`, value, at);
  }

  #compile(pointer: string): ValidateFunction {
    let fn = this.#cache.get(pointer);
    if (!fn) {
      fn = this.#ajv.compile({ $ref: `contract#${encodePointerForUri(pointer)}` });
      this.#cache.set(pointer, fn);
    }
    return fn;
  }

  /** Follows a local `$ref`. */
  resolve(schema: SchemaNode): SchemaNode {
    let s = schema;
    for (let i = 0; i < 10 && typeof s.$ref === "string" && s.$ref.startsWith("#/"); i++) {
      const target = this.at(s.$ref.slice(1));
      if (!isSchemaNode(target)) return {};
      s = target;
    }
    return s;
  }

  /** The value at a JSON pointer of the document. */
  at(pointer: string): unknown {
    return pointerSegments(pointer).reduce<unknown>(childOf, this.document);
  }
}

/** The strings of an `enum`; the contract's error codes and types are all strings. */
function stringsOf(values: unknown[] | undefined): string[] {
  return (values ?? []).filter((v): v is string => typeof v === "string");
}

function checkHeaderValue(value: string, schema: SchemaNode): string | undefined {
  if (schema.type === "integer") {
    if (!/^-?\d+$/.test(value.trim())) return `must be an integer, got ${JSON.stringify(value)}`;
    const n = Number(value);
    if (typeof schema.minimum === "number" && n < schema.minimum) return `must be >= ${schema.minimum}`;
    if (typeof schema.maximum === "number" && n > schema.maximum) return `must be <= ${schema.maximum}`;
    return undefined;
  }
  if (Array.isArray(schema.enum) && !schema.enum.includes(value))
    return `must be one of ${schema.enum.join(", ")}, got ${JSON.stringify(value)}`;
  if (schema.type === "string" && typeof schema.minLength === "number" && value.length < schema.minLength)
    return `must have at least ${schema.minLength} characters`;
  return undefined;
}

/** `/choices/0/message` → `.choices[0].message`, the kit's path notation. */
function pointerToPath(pointer: string): string {
  return pointer.replace(/\//g, ".").replace(/\.(\d+)(?=\.|$)/g, "[$1]");
}

/**
 * One ajv error in plain words, at the field it is about: a missing required property is
 * reported at that property ("missing field `usage`"), an extra one as "unexpected field
 * `message`" (closed objects say so with `additionalProperties`, `unevaluatedProperties`
 * or a `not` schema), and the rest as what the value must be.
 */
export function plainSchemaError(e: ErrorObject): { message: string; pointer: string } {
  const params: Record<string, unknown> = e.params;
  const last = e.instancePath.split("/").at(-1) ?? "";
  const field = (name: string) => `\`${name.replace(/~1/g, "/").replace(/~0/g, "~")}\``;
  switch (e.keyword) {
    case "required":
      return {
        message: `missing field ${field(String(params.missingProperty))}`,
        pointer: `${e.instancePath}/${String(params.missingProperty)}`,
      };
    case "additionalProperties":
      return {
        message: `unexpected field ${field(String(params.additionalProperty))}`,
        pointer: `${e.instancePath}/${String(params.additionalProperty)}`,
      };
    case "unevaluatedProperties":
      return {
        message: `unexpected field ${field(String(params.unevaluatedProperty))}`,
        pointer: `${e.instancePath}/${String(params.unevaluatedProperty)}`,
      };
    case "not":
      return {
        message: last && !/^\d+$/.test(last) ? `unexpected field ${field(last)}` : "a value that is not allowed here",
        pointer: e.instancePath,
      };
    case "type":
      return { message: `must be ${article(String(params.type))}`, pointer: e.instancePath };
    case "enum":
      return {
        message: `must be one of ${(Array.isArray(params.allowedValues) ? params.allowedValues : []).map((v) => JSON.stringify(v)).join(", ")}`,
        pointer: e.instancePath,
      };
    case "const":
      return { message: `must be ${JSON.stringify(params.allowedValue)}`, pointer: e.instancePath };
    case "format":
      return { message: `must be a valid ${String(params.format)}`, pointer: e.instancePath };
    case "pattern":
      return { message: `must match the pattern ${String(params.pattern)}`, pointer: e.instancePath };
    case "minLength":
    case "maxLength":
      return {
        message: `must have ${e.keyword === "minLength" ? "at least" : "at most"} ${String(params.limit)} characters`,
        pointer: e.instancePath,
      };
    case "minItems":
    case "maxItems":
      return {
        message: `must have ${e.keyword === "minItems" ? "at least" : "at most"} ${String(params.limit)} items`,
        pointer: e.instancePath,
      };
    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum":
      return { message: `must be ${String(params.comparison)} ${String(params.limit)}`, pointer: e.instancePath };
    default:
      return { message: e.message ?? "is invalid", pointer: e.instancePath };
  }
}

function article(type: string): string {
  return type
    .split(",")
    .map((t) => (/^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`))
    .join(" or ");
}

/** ajv's anyOf/oneOf failures list every branch; keep the most useful lines. */
function simplifyErrors(errors: ErrorObject[]): ErrorObject[] {
  const seen = new Set<string>();
  const out: ErrorObject[] = [];
  for (const e of errors) {
    const key = `${e.instancePath}|${e.keyword}|${e.message}|${JSON.stringify(e.params)}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(e);
  }
  // Prefer the errors that are not only "must match a schema in anyOf".
  const specific = out.filter((e) => !["anyOf", "oneOf", "if"].includes(e.keyword));
  // anyOf branches of enums (one per error code) read best as one list of allowed values.
  const merged: ErrorObject[] = [];
  const enums = new Map<string, ErrorObject>();
  for (const e of specific.length ? specific : out) {
    if (e.keyword === "enum" || e.keyword === "const") {
      const allowed =
        e.keyword === "enum"
          ? (e.params as { allowedValues: unknown[] }).allowedValues
          : [(e.params as { allowedValue: unknown }).allowedValue];
      const prior = enums.get(e.instancePath);
      if (prior) {
        (prior.params as { allowedValues: unknown[] }).allowedValues.push(...allowed);
        continue;
      }
      const copy = {
        ...e,
        keyword: "enum",
        message: "must be one of the allowed values",
        params: { allowedValues: [...allowed] },
      } as ErrorObject;
      enums.set(e.instancePath, copy);
      merged.push(copy);
    } else merged.push(e);
  }
  return merged.slice(0, 8);
}

function pick(value: unknown, instancePath: string): unknown {
  const v = pointerSegments(instancePath).reduce<unknown>(childOf, value);
  if (typeof v === "string" && v.length > 200) return `${v.slice(0, 200)}…`;
  return v;
}

export function escapePointer(segment: string): string {
  return segment.replace(/~/g, "~0").replace(/\//g, "~1");
}

function encodePointerForUri(pointer: string): string {
  return pointer
    .split("/")
    .map((s) => encodeURIComponent(s).replace(/%7E/gi, "~"))
    .join("/");
}

function templateRegex(template: string): RegExp {
  let re = "";
  for (const part of template.split(/(\{[^}]+\})/)) {
    if (part.startsWith("{") && part.endsWith("}")) re += "([^/:?]+)";
    else re += part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}

const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

function addFormats(ajv: InstanceType<typeof Ajv2020>): void {
  ajv.addFormat("date-time", {
    type: "string",
    validate: (s: string) => DATE_TIME.test(s) && !Number.isNaN(Date.parse(s)),
  });
  ajv.addFormat("int32", {
    type: "number",
    validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31,
  });
  ajv.addFormat("int64", { type: "number", validate: (n: number) => Number.isInteger(n) });
  ajv.addFormat("double", { type: "number", validate: (n: number) => Number.isFinite(n) });
  ajv.addFormat("float", { type: "number", validate: (n: number) => Number.isFinite(n) });
  for (const f of ["uri", "url", "email", "byte", "binary", "password", "uuid"]) ajv.addFormat(f, true);
}
