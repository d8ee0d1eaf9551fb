/**
 * Reads an OpenAPI 3.0, 3.1 or 3.2 document, YAML or JSON, one file or many, into the one
 * shape the rules compare: every `$ref` local (bundle.ts) and 3.0 schemas read with 3.1
 * meaning (openapi30.ts). Anything else is a DocumentError (exit 2, one line).
 */
import { isObject, type Doc } from "../openapi.ts";
import { bundleDocument, parseText } from "./bundle.ts";
import { DocumentError } from "./errors.ts";
import { normalizeOpenApi30 } from "./openapi30.ts";
import type { FileSource } from "./sources.ts";

export interface LoadedDocument {
  doc: Doc;
  /** `3.0`, `3.1` or `3.2`, as declared. */
  version: string;
  files: string[];
}

export function openApiVersion(doc: unknown, label: string): string {
  if (!isObject(doc)) throw new DocumentError(`${label}: not an OpenAPI document (expected a mapping)`);
  if (typeof doc.swagger === "string")
    throw new DocumentError(`${label}: Swagger ${doc.swagger} is not read; convert it to OpenAPI 3.x first`);
  const declared = typeof doc.openapi === "string" ? doc.openapi : undefined;
  const version = declared?.match(/^3\.([0-2])(\.|$)/)?.[0]?.replace(/\.$/, "");
  if (version === undefined)
    throw new DocumentError(
      `${label}: ${declared === undefined ? "no \`openapi\` version field" : `OpenAPI ${declared} is not read`} (3.0, 3.1 and 3.2 are)`,
    );
  if (doc.paths !== undefined && !isObject(doc.paths)) throw new DocumentError(`${label}: \`paths\` is not a mapping`);
  if (doc.webhooks !== undefined && !isObject(doc.webhooks))
    throw new DocumentError(`${label}: \`webhooks\` is not a mapping`);
  if (doc.components !== undefined && !isObject(doc.components))
    throw new DocumentError(`${label}: \`components\` is not a mapping`);
  return version;
}

/** Applies 3.0 → 3.1 meaning in place; returns the declared version. */
export function prepareDocument(doc: unknown, label: string): string {
  const version = openApiVersion(doc, label);
  if (version === "3.0") normalizeOpenApi30(doc as Doc, label);
  return version;
}

export async function loadDocument(path: string, source: FileSource): Promise<LoadedDocument> {
  const { doc, files } = await bundleDocument(path, source, openApiVersion);
  const version = prepareDocument(doc, source.label(path));
  return { doc, version, files };
}

/** A document given as text (a built revision): one file, no file references. */
export function documentFromText(text: string, label: string): Doc {
  const doc = parseText(text, label);
  prepareDocument(doc, label);
  return doc as Doc;
}
