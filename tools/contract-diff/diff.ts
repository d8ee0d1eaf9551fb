/**
 * Compares two OpenAPI documents and returns every change, each tagged with its rule.
 * Walks from the operations (what is on the wire), never from component names.
 */
import type { Change } from "./model.ts";
import type { Doc } from "./openapi.ts";
import { diffContext } from "./rules/context.ts";
import { checkErrorCodes, errorCodeRegistry } from "./rules/error-codes.ts";
import { checkParameters } from "./rules/parameters.ts";
import { checkOperationMetadata, checkOperationSets } from "./rules/paths.ts";
import { checkRequestBody } from "./rules/request-body.ts";
import { checkResponses } from "./rules/responses.ts";
import { checkDocumentSecurity, checkSecurity } from "./rules/security.ts";
import { checkServers } from "./rules/servers.ts";

export function diffDocuments(base: Doc, head: Doc): Change[] {
  const errorCodes = new Set([...errorCodeRegistry(base), ...errorCodeRegistry(head)]);
  const ctx = diffContext(base, head, errorCodes);
  const operations = checkOperationSets(base, head);
  const changes = [
    ...checkServers(base, head),
    ...checkDocumentSecurity(base, head),
    ...checkErrorCodes(base, head),
    ...operations.changes,
  ];
  for (const [b, h] of operations.common) {
    changes.push(
      ...checkOperationMetadata(b, h),
      ...checkSecurity(b, h, base, head),
      ...checkParameters(b, h, ctx),
      ...checkRequestBody(b, h, ctx),
      ...checkResponses(b, h, ctx),
    );
  }
  return changes;
}
