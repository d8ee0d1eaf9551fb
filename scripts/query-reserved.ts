/**
 * Marks the list `filter` query parameter `allowReserved: true` in an emitted OpenAPI
 * document. A filter is written `state:RUNNING`, and people type the colon as is (curl,
 * a browser's address bar); without the flag express-openapi-validator refuses any
 * unescaped reserved character. @typespec/openapi3 1.16 emits `allowReserved` only for
 * path parameters, where it is not allowed; drop this step when it emits it for queries.
 */
import { isMap, parseDocument, visit } from "yaml";

const RESERVED_QUERY_PARAMETERS = new Set(["filter"]);

export function allowReservedInQueries(text: string): string {
  const document = parseDocument(text);
  visit(document, {
    Map(_key, node) {
      if (!isMap(node)) return;
      if (node.get("in") === "query" && RESERVED_QUERY_PARAMETERS.has(String(node.get("name")))) {
        node.set("allowReserved", true);
      }
    },
  });
  return document.toString({ lineWidth: 0 });
}
