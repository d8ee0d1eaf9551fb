/**
 * Compares two OpenAPI documents and returns every change, each tagged with its rule.
 * Walks from the operations (what is on the wire), never from component names; webhooks
 * and each operation's callbacks are walked the same way with the parties' roles reversed
 * (rules/webhooks.ts).
 */
import type { Change } from "./model.ts";
import type { Doc } from "./openapi.ts";
import { diffContext, type DiffOptions } from "./rules/context.ts";
import { checkErrorCodes, errorCodeRegistry } from "./rules/error-codes.ts";
import { checkParameters } from "./rules/parameters.ts";
import { checkOperationMetadata, checkOperationSets } from "./rules/paths.ts";
import { checkRequestBody } from "./rules/request-body.ts";
import { checkResponses } from "./rules/responses.ts";
import { checkDocumentSecurity, checkSecurity } from "./rules/security.ts";
import { checkServers } from "./rules/servers.ts";
import { checkCallbacks, checkWebhooks } from "./rules/webhooks.ts";

export function diffDocuments(base: Doc, head: Doc, options: Partial<DiffOptions> = {}): Change[] {
  const errorCodes = new Set([...errorCodeRegistry(base), ...errorCodeRegistry(head)]);
  const ctx = diffContext(base, head, errorCodes, options);
  const operations = checkOperationSets(base, head, ctx.options.date);
  const changes = [
    ...checkServers(base, head),
    ...checkDocumentSecurity(base, head),
    ...checkErrorCodes(base, head),
    ...operations.changes,
    ...checkWebhooks(ctx),
  ];
  for (const [b, h] of operations.common) {
    changes.push(
      ...checkOperationMetadata(b, h),
      ...checkSecurity(b, h, base, head),
      ...checkParameters(b, h, ctx),
      ...checkRequestBody(b, h, ctx),
      ...checkResponses(b, h, ctx),
      ...checkCallbacks(b, h, ctx),
    );
  }
  return changes;
}
