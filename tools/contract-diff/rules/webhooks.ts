/**
 * Webhooks (OpenAPI 3.1 `webhooks`, and each operation's `callbacks`, their 3.0 form):
 * requests the API sends to its users' receivers, reported under the webhook rules. The
 * roles are reversed: the implementation (the API) writes the payload and the client (the
 * receiver) reads it, so a payload is compared as a *response* schema (a new required
 * field: implementations built on the base never send it; a removed one: receivers lose
 * it), and what the receiver answers is compared as a *request* (its statuses, media types
 * and schemas).
 */
import { defineRule, type Change, type Rule } from "../model.ts";
import {
  derefObject,
  isObject,
  operationLabel,
  operationsOf,
  type Doc,
  type Node,
  type OperationRef,
} from "../openapi.ts";
import { diffSchemas } from "../schema-diff.ts";
import { inPart, type DiffContext } from "./context.ts";

export const webhookRemoved = defineRule({
  id: "webhook-removed",
  level: "ERR",
  breaks: "clients",
  description: "A webhook (or an operation's callback) was removed; receivers waiting for it never get it again.",
});
export const webhookAdded = defineRule({
  id: "webhook-added",
  level: "INFO",
  breaks: "none",
  description: "A new webhook (or callback); receivers that do not subscribe to it are not affected.",
});
export const webhookPayloadRemoved = defineRule({
  id: "webhook-payload-media-type-removed",
  level: "ERR",
  breaks: "clients",
  description: "A webhook no longer sends a payload in this media type; receivers parsing it break.",
});
export const webhookPayloadAdded = defineRule({
  id: "webhook-payload-media-type-added",
  level: "WARN",
  breaks: "clients",
  description: "A webhook may send a payload in a new media type; receivers built on the base cannot parse it.",
});

/*
 * What receivers answer is judged like a request: a status or media type the API no longer
 * accepts refuses answers receivers built on the base give (ERR clients); a new one is an
 * answer an API built on the base does not expect (WARN implementations).
 */
export const webhookAnswerStatusRemoved = defineRule({
  id: "webhook-answer-status-removed",
  level: "ERR",
  breaks: "clients",
  description: "A status receivers answered a webhook with is no longer accepted; receivers answering it are refused.",
});
export const webhookAnswerStatusAdded = defineRule({
  id: "webhook-answer-status-added",
  level: "WARN",
  breaks: "implementations",
  description: "Receivers may answer a webhook with a new status; an API built on the base does not expect it.",
});
export const webhookAnswerMediaTypeRemoved = defineRule({
  id: "webhook-answer-media-type-removed",
  level: "ERR",
  breaks: "clients",
  description:
    "A media type receivers answered a webhook in is no longer accepted; receivers answering in it are refused.",
});
export const webhookAnswerMediaTypeAdded = defineRule({
  id: "webhook-answer-media-type-added",
  level: "WARN",
  breaks: "implementations",
  description: "Receivers may answer a webhook in a new media type; an API built on the base cannot read it.",
});

export const webhookRules = [
  webhookRemoved,
  webhookAdded,
  webhookPayloadRemoved,
  webhookPayloadAdded,
  webhookAnswerStatusRemoved,
  webhookAnswerStatusAdded,
  webhookAnswerMediaTypeRemoved,
  webhookAnswerMediaTypeAdded,
];

interface Webhook {
  key: string;
  /** What the report calls it: `WEBHOOK petAdopted (POST)`, `CALLBACK onData {$request.body#/url} (POST) of POST /subscribe`. */
  label: string;
  /** What the messages call it: the webhook's or the callback's name. */
  name: string;
  kind: "webhook" | "callback";
  operation: Node;
}

/** The operations of a map of path items (a document's `webhooks`, or one callback's expressions). */
function hooksIn(
  doc: Doc,
  items: unknown,
  describe: (key: string, method: string) => Omit<Webhook, "operation">,
): Webhook[] {
  const hooks: Webhook[] = [];
  for (const [key, raw] of Object.entries(isObject(items) ? items : {})) {
    const item = derefObject(doc, raw).node;
    if (item === undefined) continue;
    for (const [method, operation] of operationsOf(item)) hooks.push({ ...describe(key, method), operation });
  }
  return hooks;
}

function webhooksOf(doc: Doc): Map<string, Webhook> {
  const hooks = hooksIn(doc, doc.webhooks, (name, method) => ({
    key: `${name} ${method}`,
    label: `WEBHOOK ${name} (${method.toUpperCase()})`,
    name,
    kind: "webhook",
  }));
  return new Map(hooks.map((h) => [h.key, h]));
}

/** An operation's callbacks (OpenAPI 3.0's webhooks): each expression's operations, keyed by callback name, expression and method. */
function callbacksOf(doc: Doc, op: OperationRef): Map<string, Webhook> {
  const result = new Map<string, Webhook>();
  const callbacks = isObject(op.operation.callbacks) ? op.operation.callbacks : {};
  for (const [name, raw] of Object.entries(callbacks)) {
    const expressions = derefObject(doc, raw).node;
    const hooks = hooksIn(doc, expressions, (expression, method) => ({
      key: `${name} ${expression} ${method}`,
      label: `CALLBACK ${name} ${expression} (${method.toUpperCase()}) of ${operationLabel(op)}`,
      name,
      kind: "callback",
    }));
    for (const hook of hooks) result.set(hook.key, hook);
  }
  return result;
}

function change(rule: Rule, hook: Webhook, message: string, part?: string): Change {
  return { rule, message, operation: hook.label, path: [], ...(part !== undefined ? { part } : {}) };
}

function contentOf(doc: Doc, node: unknown): Record<string, unknown> {
  const resolved = derefObject(doc, node).node;
  return isObject(resolved?.content) ? resolved.content : {};
}

function comparePayloads(base: Webhook, head: Webhook, ctx: DiffContext): Change[] {
  const before = contentOf(ctx.base, base.operation.requestBody);
  const after = contentOf(ctx.head, head.operation.requestBody);
  const changes: Change[] = [];
  for (const [mediaType, media] of Object.entries(before)) {
    const part = `payload ${mediaType}`;
    if (!(mediaType in after)) {
      changes.push(change(webhookPayloadRemoved, head, `payload media type \`${mediaType}\` removed`, part));
      continue;
    }
    const schemaChanges = diffSchemas(
      isObject(media) ? media.schema : undefined,
      (after[mediaType] as Node)?.schema,
      ctx.response,
    );
    changes.push(...inPart(part, schemaChanges).map((c) => ({ ...c, operation: head.label })));
  }
  for (const mediaType of Object.keys(after)) {
    if (!(mediaType in before))
      changes.push(
        change(webhookPayloadAdded, head, `payload media type \`${mediaType}\` added`, `payload ${mediaType}`),
      );
  }
  return changes;
}

/** What the receiver answers: written by clients, read by the API. */
function compareAnswers(base: Webhook, head: Webhook, ctx: DiffContext): Change[] {
  const before = isObject(base.operation.responses) ? base.operation.responses : {};
  const after = isObject(head.operation.responses) ? head.operation.responses : {};
  const changes: Change[] = [];
  for (const [status, raw] of Object.entries(before)) {
    if (!(status in after)) {
      changes.push(change(webhookAnswerStatusRemoved, head, `receivers may no longer answer ${status}`));
      continue;
    }
    changes.push(
      ...compareAnswerContent(status, contentOf(ctx.base, raw), contentOf(ctx.head, after[status]), head, ctx),
    );
  }
  for (const status of Object.keys(after)) {
    if (!(status in before)) changes.push(change(webhookAnswerStatusAdded, head, `receivers may now answer ${status}`));
  }
  return changes;
}

/** One status's answer bodies; an answer without declared content accepts any body, so content added there is not compared. */
function compareAnswerContent(
  status: string,
  before: Record<string, unknown>,
  after: Record<string, unknown>,
  head: Webhook,
  ctx: DiffContext,
): Change[] {
  const changes: Change[] = [];
  for (const [mediaType, media] of Object.entries(before)) {
    const part = `receiver's answer ${status} ${mediaType}`;
    const other = after[mediaType];
    if (other === undefined) {
      changes.push(
        change(webhookAnswerMediaTypeRemoved, head, `answer media type \`${mediaType}\` no longer accepted`, part),
      );
      continue;
    }
    if (!isObject(other) || !isObject(media)) continue;
    changes.push(
      ...inPart(part, diffSchemas(media.schema, other.schema, ctx.request)).map((c) => ({
        ...c,
        operation: head.label,
      })),
    );
  }
  if (Object.keys(before).length === 0) return changes;
  for (const mediaType of Object.keys(after)) {
    if (!(mediaType in before))
      changes.push(
        change(
          webhookAnswerMediaTypeAdded,
          head,
          `answer media type \`${mediaType}\` now accepted`,
          `receiver's answer ${status} ${mediaType}`,
        ),
      );
  }
  return changes;
}

function compareHooks(before: Map<string, Webhook>, after: Map<string, Webhook>, ctx: DiffContext): Change[] {
  const changes: Change[] = [];
  for (const [key, hook] of before) {
    const other = after.get(key);
    if (other === undefined) {
      changes.push(change(webhookRemoved, hook, `${hook.kind} \`${hook.name}\` removed`));
      continue;
    }
    changes.push(...comparePayloads(hook, other, ctx), ...compareAnswers(hook, other, ctx));
  }
  for (const [key, hook] of after) {
    if (!before.has(key)) changes.push(change(webhookAdded, hook, `${hook.kind} \`${hook.name}\` added`));
  }
  return changes;
}

export function checkWebhooks(ctx: DiffContext): Change[] {
  return compareHooks(webhooksOf(ctx.base), webhooksOf(ctx.head), ctx);
}

/** The callbacks of an operation on both sides, judged as webhooks (the API calls the client back). */
export function checkCallbacks(base: OperationRef, head: OperationRef, ctx: DiffContext): Change[] {
  return compareHooks(callbacksOf(ctx.base, base), callbacksOf(ctx.head, head), ctx);
}
