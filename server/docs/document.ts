/**
 * The document the docs page renders: the generated OpenAPI 3.1 document with its
 * `origin` server variable defaulting to the origin the request reached (scheme and
 * Host), so "Try it out" calls the server that serves the page, whatever its address
 * and port, instead of the generated default.
 *
 * The catalogue the server runs with is added too (catalog-in-document.ts: its models in
 * the introduction, and the examples' models where it lacks them).
 *
 * The YAML (what `/docs/openapi.yaml` serves, byte for byte but for those values) and
 * the JSON the page loads (no YAML parsing in the browser) are both made once per origin
 * and kept, compressed, for the few origins a server is reached by.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Request } from "express";
import { isScalar, parse, parseDocument } from "yaml";
import { platformModels, type PlatformModel } from "../inference/catalog.ts";
import { withCatalog } from "./catalog-in-document.ts";
import { compressedBody, type CompressedBody } from "./compressed.ts";

const OPENAPI_PATH = join(import.meta.dirname, "..", "..", "generated", "openapi.3.1.yaml");
/** Origins kept; a server behind one or two names needs a few, and odd Hosts cannot grow the cache past this. */
const KEPT_ORIGINS = 8;

/** The generated document's text before and after the value of `servers[0].variables.origin.default`. */
interface OriginDefaultSlot {
  before: string;
  /** The generated default as written in the document (`http://127.0.0.1:8080`). */
  generated: string;
  after: string;
}

const jsonByOrigin = new Map<string, CompressedBody>();
let slot: OriginDefaultSlot | undefined;
/** The catalogue the slot was made with: a server started with another (tests, one process) makes it again. */
let slotCatalog: readonly PlatformModel[] | undefined;

/** Found once, from the YAML node's source range, so the rest of the document is served byte for byte. */
function originDefaultSlot(): OriginDefaultSlot {
  const models = platformModels();
  if (slot && slotCatalog === models) return slot;
  jsonByOrigin.clear();
  slotCatalog = models;
  const text = withCatalog(readFileSync(OPENAPI_PATH, "utf8"), models);
  const node = parseDocument(text).getIn(["servers", 0, "variables", "origin", "default"], true);
  if (!isScalar(node) || !node.range) throw new Error(`${OPENAPI_PATH}: no servers[0].variables.origin.default`);
  const [start, end] = node.range;
  slot = { before: text.slice(0, start), generated: text.slice(start, end), after: text.slice(end) };
  return slot;
}

/** The document with the origin variable defaulting to the origin this request reached, as YAML. */
export function documentYamlFor(req: Request): string {
  const { before, generated, after } = originDefaultSlot();
  const host = req.get("host");
  // Without a Host (HTTP/1.0) there is no origin to give: the generated default stays.
  // A JSON string is a valid YAML double-quoted scalar, so an odd Host cannot break the document.
  const origin = host ? JSON.stringify(`${req.protocol}://${host}`) : generated;
  return `${before}${origin}${after}`;
}

/** The same document as JSON, made once per origin and kept compressed. */
export function documentJsonFor(req: Request): CompressedBody {
  originDefaultSlot();
  const key = `${req.protocol}://${req.get("host") ?? ""}`;
  let body = jsonByOrigin.get(key);
  if (!body) {
    body = compressedBody(Buffer.from(JSON.stringify(parse(documentYamlFor(req)))));
    if (jsonByOrigin.size >= KEPT_ORIGINS) jsonByOrigin.delete(jsonByOrigin.keys().next().value as string);
    jsonByOrigin.set(key, body);
  }
  return body;
}
