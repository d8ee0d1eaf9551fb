/**
 * `generated/contract-values.ts`: the values the code needs at run time that the contract
 * already states, read from the generated OpenAPI 3.2 document so nobody re-types them:
 *
 * - `enums`: every string enum schema of `components.schemas`, as a readonly tuple;
 * - `ERROR_STATUS` (error code → HTTP status) and `ERROR_TYPE` (status → `error.type`),
 *   from the error objects (`…ErrorDetail`) that each status's response carries;
 * - `OPERATION_IDS` and `OperationId`; `PAID_OPERATIONS`, the operations that declare a 402.
 *
 * The emitted module checks itself against `generated/api.d.ts` at compile time (every
 * list complete, every status's codes and type as its error object says), so `tsc` fails
 * if the two generated files ever disagree. Generation itself stops only on a contradiction
 * (a code or status paired twice): the contract diff (tools/contract-diff/) runs it over
 * other revisions and small fixture contracts, which may lack what this one has.
 */
import { parse } from "yaml";

/** The nodes of the document this step reads; every field is optional because the input is not trusted. */
interface Schema {
  $ref?: string;
  type?: string;
  enum?: unknown[];
  anyOf?: Schema[];
  required?: string[];
  properties?: Record<string, Schema>;
  description?: string;
}
interface Operation {
  operationId?: string;
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}
interface Document {
  paths?: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

/**
 * Decided in contract/errors.tsp (`ErrorCode.REQUEST_CANCELLED`): the client hung up, so no
 * response carries this code; the server logs it with status 499.
 */
const LOGGED_ONLY_CODES: Record<string, number> = { REQUEST_CANCELLED: 499 };

const HTTP_METHODS = new Set(["get", "put", "post", "delete", "options", "head", "patch", "trace", "query"]);

/** One status's error object: the schema's name, its status, its `error.type` and its codes. */
interface ErrorDetail {
  schema: string;
  status: number;
  type: string;
  codes: string[];
}

/** The text of `generated/contract-values.ts` for the given OpenAPI 3.2 document (YAML). */
export function contractValuesSource(openapi32: string, header: string): string {
  const document = parse(openapi32) as Document;
  const schemas = document.components?.schemas ?? {};
  const enums = stringEnums(schemas);
  const operations = operationsOf(document);
  const details = errorDetails(schemas, operations);
  const status = errorStatus(details, enums.ErrorCode ?? []);
  const type = errorType(details);
  const paid = operations.filter((op) => op.responses?.["402"] !== undefined).map((op) => op.operationId as string);
  return [
    `// ${header}`,
    `// From generated/openapi.3.2.yaml by scripts/contract-values.ts; checked against api.d.ts below.`,
    `import type { components, operations } from "./api.d.ts";`,
    "",
    'type Schemas = components["schemas"];',
    "type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;",
    "type Assert<T extends true> = T;",
    "",
    enumsSource(enums),
    errorStatusSource(status, details),
    errorTypeSource(type, details),
    operationsSource(
      operations.map((op) => op.operationId as string),
      paid,
    ),
  ].join("\n");
}

function stringEnums(schemas: Record<string, Schema>): Record<string, string[]> {
  const enums: Record<string, string[]> = {};
  for (const [name, schema] of Object.entries(schemas)) {
    if (schema.type === "string" && Array.isArray(schema.enum)) enums[name] = schema.enum.map(String);
  }
  return enums;
}

function operationsOf(document: Document): Operation[] {
  const found: Operation[] = [];
  for (const pathItem of Object.values(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(pathItem)) {
      if (!HTTP_METHODS.has(method)) continue;
      if (typeof operation.operationId === "string") found.push(operation);
    }
  }
  return found;
}

function refName(schema: Schema | undefined): string | undefined {
  return schema?.$ref?.replace(/^#\/components\/schemas\//, "");
}

/** An error object: `{message, type, code, param}` with one fixed `type`. */
function isErrorDetail(schema: Schema): boolean {
  const props = schema.properties;
  return (
    props?.message !== undefined &&
    props.code !== undefined &&
    props.param !== undefined &&
    props.type?.enum?.length === 1 &&
    Object.keys(props).length === 4
  );
}

/** The codes an error object's `code` allows: an inline enum, or a named enum or union of enums (else none). */
function codesOf(code: Schema, schemas: Record<string, Schema>): string[] {
  const named = refName(code);
  const resolved = named === undefined ? code : schemas[named];
  if (resolved === undefined) throw new Error(`unknown schema ${named}`);
  if (resolved.enum !== undefined) return resolved.enum.map(String);
  if (resolved.anyOf !== undefined) return resolved.anyOf.flatMap((branch) => codesOf(branch, schemas));
  return [];
}

/**
 * The status of each error object, from the responses that carry it (envelope → `error`).
 * An error object no operation declares (405, answered for any path by the router) takes the
 * status its description states: "The error object of a 405 response".
 */
function errorDetails(schemas: Record<string, Schema>, operations: Operation[]): ErrorDetail[] {
  const statusOf = new Map<string, number>();
  for (const operation of operations) {
    for (const [status, response] of Object.entries(operation.responses ?? {})) {
      if (Number(status) < 400) continue;
      for (const media of Object.values(response.content ?? {})) {
        const envelope = media.schema?.$ref === undefined ? media.schema : schemas[refName(media.schema) ?? ""];
        const detail = refName(envelope?.properties?.error);
        if (detail !== undefined) pairOnce(statusOf, detail, Number(status), `${operation.operationId} ${status}`);
      }
    }
  }
  return Object.entries(schemas)
    .filter(([, schema]) => isErrorDetail(schema))
    .flatMap(([name, schema]): ErrorDetail[] => {
      const described = /The error object of a (\d{3}) response/.exec(schema.description ?? "")?.[1];
      const status = statusOf.get(name) ?? (described === undefined ? undefined : Number(described));
      // Left out when neither says: the module's checks then fail tsc for the codes it carries.
      if (status === undefined) return [];
      const props = schema.properties as Record<string, Schema>;
      return [
        { schema: name, status, type: String(props.type?.enum?.[0]), codes: codesOf(props.code as Schema, schemas) },
      ];
    })
    .sort((a, b) => a.status - b.status);
}

function pairOnce<K, V>(map: Map<K, V>, key: K, value: V, where: string): void {
  const before = map.get(key);
  if (before !== undefined && before !== value)
    throw new Error(`${where}: ${String(key)} is both ${String(before)} and ${String(value)}`);
  map.set(key, value);
}

/** Code → status, in the order of statuses, then of the ErrorCode enum; every code has exactly one. */
function errorStatus(details: ErrorDetail[], allCodes: string[]): [string, number][] {
  const statusOf = new Map<string, number>();
  for (const detail of details) for (const code of detail.codes) pairOnce(statusOf, code, detail.status, detail.schema);
  for (const [code, status] of Object.entries(LOGGED_ONLY_CODES)) {
    if (allCodes.includes(code)) pairOnce(statusOf, code, status, "a logged-only code");
  }
  // A code no error object carries is left out, and the module's `satisfies Record<ErrorCode, number>` fails tsc.
  return allCodes
    .filter((code) => statusOf.has(code))
    .map((code): [string, number] => [code, statusOf.get(code) as number])
    .sort((a, b) => a[1] - b[1]);
}

function errorType(details: ErrorDetail[]): [number, string][] {
  const typeOf = new Map<number, string>();
  for (const detail of details) pairOnce(typeOf, detail.status, detail.type, detail.schema);
  return [...typeOf.entries()];
}

const quote = (value: string): string => JSON.stringify(value);

function enumsSource(enums: Record<string, string[]>): string {
  const names = Object.keys(enums);
  const lists = names.map(
    (name) =>
      `  ${name}: [${enums[name]?.map(quote).join(", ")}] as const satisfies readonly Schemas[${quote(name)}][],`,
  );
  const checks = names.map((name) => `  Assert<Same<(typeof enums.${name})[number], Schemas[${quote(name)}]>>,`);
  return [
    "/** Every string enum of the contract, in the contract's order. */",
    "export const enums = {",
    ...lists,
    "};",
    "",
    "/** Each list holds every member of its enum (`satisfies` above keeps out anything else). */",
    "export type EnumsAreComplete = [",
    ...checks,
    "];",
    "",
  ].join("\n");
}

function errorStatusSource(status: [string, number][], details: ErrorDetail[]): string {
  const checks = details.map(
    (d) => `  Assert<Same<CodesWithStatus<${d.status}>, Schemas[${quote(d.schema)}]["code"]>>,`,
  );
  return [
    "/** The HTTP status each error code is sent with; `REQUEST_CANCELLED` is only ever logged (499). */",
    "export const ERROR_STATUS = {",
    ...status.map(([code, s]) => `  ${code}: ${s},`),
    '} as const satisfies Record<Schemas["ErrorCode"], number>;',
    "",
    "type CodesWithStatus<S extends number> = {",
    '  [C in Schemas["ErrorCode"]]: (typeof ERROR_STATUS)[C] extends S ? C : never;',
    '}[Schemas["ErrorCode"]];',
    "/** Each status's codes are exactly those its error object allows. */",
    "export type ErrorStatusMatchesContract = [",
    ...checks,
    "];",
    "",
  ].join("\n");
}

function errorTypeSource(type: [number, string][], details: ErrorDetail[]): string {
  const checks = details.map(
    (d) => `  Assert<Same<(typeof ERROR_TYPE)[${d.status}], Schemas[${quote(d.schema)}]["type"]>>,`,
  );
  return [
    "/** The `error.type` of each error status (the contract pairs each status with one type). */",
    "export const ERROR_TYPE = {",
    ...type.map(([s, t]) => `  ${s}: ${quote(t)},`),
    '} as const satisfies Record<number, Schemas["ErrorType"]>;',
    "",
    "/** The type of each status is the one its error object fixes. */",
    "export type ErrorTypeMatchesContract = [",
    ...checks,
    "];",
    "",
  ].join("\n");
}

function operationsSource(ids: string[], paid: string[]): string {
  return [
    "/** Every operationId of the contract, in the document's order. */",
    `export const OPERATION_IDS = [${ids.map(quote).join(", ")}] as const satisfies readonly (keyof operations)[];`,
    "export type OperationId = (typeof OPERATION_IDS)[number];",
    "",
    "/** The operations that declare a 402: inference and the creation of training jobs. */",
    `export const PAID_OPERATIONS = [${paid.map(quote).join(", ")}] as const satisfies readonly OperationId[];`,
    "",
    'type Declares402 = { [K in OperationId]: 402 extends keyof operations[K]["responses"] ? K : never }[OperationId];',
    "/** The lists hold every operation, and every operation that declares a 402. */",
    "export type OperationsAreComplete = [",
    "  Assert<Same<OperationId, keyof operations>>,",
    "  Assert<Same<(typeof PAID_OPERATIONS)[number], Declares402>>,",
    "];",
    "",
  ].join("\n");
}
