/**
 * Corrects the `itemSchema` of `text/event-stream` bodies in the emitted OpenAPI 3.2
 * document, where @typespec/openapi3 1.16 gets two things wrong for streams that mix
 * named and unnamed events (the OpenAI-format chat and completions streams):
 *
 * - it requires `event` on every item, but an event sent without an `event:` line has
 *   no `event` field (the SSE default type, `message`, is applied by the client), and
 *   every dispatched event has `data`;
 * - the unnamed branch constrains nothing, so a terminal `[DONE]` item or an `error`
 *   item matches two `oneOf` branches.
 *
 * Each branch is made exclusive: named branches require their `event`; unnamed ones
 * accept only an absent or `message` event; branches without a fixed `data` exclude the
 * terminal sentinels. Drop this step when the emitter does it itself.
 */
import { isMap, parseDocument, type Document, type YAMLMap } from "yaml";

/** A JSON Schema object; the keywords this step reads or writes are named, the rest are carried along. */
interface SchemaObject {
  const?: unknown;
  not?: unknown;
  required?: string[];
  properties?: Record<string, SchemaObject>;
  oneOf?: SchemaObject[];
  [keyword: string]: unknown;
}

/** Returns the item schema with exclusive branches (input is not modified). */
export function exclusiveEventBranches(itemSchema: SchemaObject): SchemaObject {
  const branches = itemSchema.oneOf ?? [];
  const sentinels = branches.map((b) => b.properties?.data?.const).filter((c): c is string => typeof c === "string");
  const oneOf = branches.map((branch) => {
    const properties = { ...branch.properties };
    const named = typeof properties.event?.const === "string";
    if (!named) properties.event = { const: "message" };
    const data = { ...properties.data };
    if (data.const === undefined && sentinels.length > 0) data.not = { enum: [...sentinels] };
    properties.data = data;
    return named ? { ...branch, properties, required: ["event"] } : { ...branch, properties };
  });
  return { ...itemSchema, required: ["data"], oneOf };
}

/** Applies `exclusiveEventBranches` to every event-stream body of an OpenAPI 3.2 YAML text. */
export function fixEventStreamItemSchemas(yamlText: string): string {
  const doc = parseDocument(yamlText);
  for (const stream of eventStreamBodies(doc)) {
    const node = stream.get("itemSchema");
    const itemSchema: unknown = isMap(node) ? node.toJSON() : undefined;
    if (!isSchemaObject(itemSchema)) continue;
    stream.set("itemSchema", doc.createNode(exclusiveEventBranches(itemSchema), { aliasDuplicateObjects: false }));
  }
  return doc.toString({ lineWidth: 0 });
}

/** The `text/event-stream` media objects (with an itemSchema) of every operation's responses. */
function* eventStreamBodies(doc: Document): Generator<YAMLMap> {
  const paths = doc.get("paths");
  if (!isMap(paths)) return;
  for (const pathItem of paths.items) {
    for (const operation of mapValues(pathItem.value)) {
      for (const response of mapValues(operation.get("responses"))) {
        const content = response.get("content");
        const stream = isMap(content) ? content.get("text/event-stream") : undefined;
        if (isMap(stream) && stream.has("itemSchema")) yield stream;
      }
    }
  }
}

/** Any object is a schema here: the emitter wrote it, and every keyword SchemaObject names is optional. */
function isSchemaObject(value: unknown): value is SchemaObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function mapValues(node: unknown): YAMLMap[] {
  return isMap(node) ? node.items.map((pair) => pair.value).filter(isMap) : [];
}
