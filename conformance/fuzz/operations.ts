/**
 * The contract's operations as the fuzzer needs them: method, path template, parameters
 * with their schemas, request bodies by media type, the security header names, and the
 * declared response statuses; read from the kit's own copy of the contract (the OpenAPI
 * document `Contract.load()` reads), with `$ref`s resolved on demand.
 */
import { Contract } from "../contract.ts";
import type { Json } from "./json.ts";

export type Schema = { [key: string]: unknown };

export interface ParamSpec {
  name: string;
  in: "path" | "query" | "header";
  required: boolean;
  schema: Schema;
}

export interface FuzzOperation {
  operationId: string;
  /** Upper case. */
  method: string;
  /** The contract's template without the base path: `/accounts/{account}/datasets/{dataset}:upload`. */
  template: string;
  params: ParamSpec[];
  /** Media type → schema of the request body; empty when the operation takes no body. */
  bodies: Map<string, Schema>;
  bodyRequired: boolean;
  /** `x-api-key` when the security also accepts that header (POST /messages). */
  apiKeyHeader: string | undefined;
  /** Declared response statuses, as numbers. */
  statuses: number[];
}

export interface FuzzContract {
  doc: Schema;
  operations: FuzzOperation[];
  /** Follows `$ref`s to the schema they name. */
  resolve(schema: Schema): Schema;
}

const METHODS = ["get", "put", "post", "delete", "patch", "options", "head", "trace"];

let cached: FuzzContract | undefined;

/** The contract of the kit (the document `Contract.load()` reads), loaded once. */
export function loadContract(): FuzzContract {
  if (cached) return cached;
  cached = fuzzContract(Contract.load().document as unknown as Schema);
  return cached;
}

export function fuzzContract(doc: Schema): FuzzContract {
  const resolve = (schema: Schema): Schema => {
    let current = schema;
    for (let i = 0; i < 32 && typeof current.$ref === "string"; i++) {
      const pointer = current.$ref
        .replace(/^#\//, "")
        .split("/")
        .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
      current = pointer.reduce<Json>((node, key) => node?.[key], doc) as Schema;
      if (current === undefined) throw new Error(`unresolvable $ref ${String(schema.$ref)}`);
    }
    return current;
  };
  const schemes = ((doc.components as Schema).securitySchemes ?? {}) as Record<string, Schema>;
  const operations: FuzzOperation[] = [];
  for (const [template, item] of Object.entries(doc.paths as Record<string, Schema>)) {
    for (const method of METHODS) {
      const op = item[method] as Schema | undefined;
      if (!op) continue;
      const params = [...((item.parameters as Schema[]) ?? []), ...((op.parameters as Schema[]) ?? [])].map((p) => {
        const param = resolve(p);
        return {
          name: param.name as string,
          in: param.in as ParamSpec["in"],
          required: param.required === true,
          schema: resolve((param.schema as Schema) ?? {}),
        };
      });
      const bodies = new Map<string, Schema>();
      let bodyRequired = false;
      if (op.requestBody) {
        const body = resolve(op.requestBody as Schema);
        bodyRequired = body.required === true;
        for (const [mediaType, media] of Object.entries((body.content as Record<string, Schema>) ?? {})) {
          bodies.set(mediaType, (media.schema as Schema) ?? {});
        }
      }
      const security = ((op.security ?? doc.security ?? []) as Record<string, unknown>[]).flatMap((req) =>
        Object.keys(req),
      );
      const apiKey = security.map((name) => schemes[name]).find((s) => s?.type === "apiKey" && s.in === "header");
      operations.push({
        operationId: op.operationId as string,
        method: method.toUpperCase(),
        template,
        params,
        bodies,
        bodyRequired,
        apiKeyHeader: apiKey ? (apiKey.name as string).toLowerCase() : undefined,
        statuses: Object.keys((op.responses as Schema) ?? {}).map(Number),
      });
    }
  }
  return { doc, operations, resolve };
}

/** JSON pointer (for Ajv) to the schema of an operation's declared response body, if any. */
export function responseSchemaPointer(contract: FuzzContract, op: FuzzOperation, status: number): string | undefined {
  const responses = ((contract.doc.paths as Schema)[op.template] as Schema)[op.method.toLowerCase()] as Schema;
  const response = (responses.responses as Schema)[String(status)] as Schema | undefined;
  if (!response) return undefined;
  const resolved = contract.resolve(response);
  const content = resolved.content as Record<string, Schema> | undefined;
  if (!content?.["application/json"]?.schema) return undefined;
  const escape = (s: string) => s.replace(/~/g, "~0").replace(/\//g, "~1");
  return `#/paths/${escape(op.template)}/${op.method.toLowerCase()}/responses/${status}/content/${escape("application/json")}/schema`;
}
