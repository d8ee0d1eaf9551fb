/**
 * A real server for HTTP tests: createApp over a SQLite store (PostgreSQL with TEST_STORE=postgres) in a temp directory, on an
 * ephemeral port, with accounts and one key each. `close()` stops everything it started.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import type { Router } from "express";
import { createApp } from "../../server/http/app.ts";
import { issueApiKey } from "../../server/store/api-keys.ts";
import { withCaches } from "../../server/store/cache/cached-store.ts";
import { openTestStore } from "../store/test-store.ts";
import type { NewAccount, Store } from "../../server/store/store.ts";
import { registerTestRoutes } from "./test-routes.ts";

export interface TestServer {
  baseUrl: string;
  store: Store;
  /** The secret of each account's key, by account id. */
  keys: Record<string, string>;
  /** The key id of each account's key. */
  keyIds: Record<string, string>;
  close(): Promise<void>;
}

export interface TestServerOptions {
  accounts?: NewAccount[];
  maxBodyBytes?: number;
  validateResponses?: boolean;
  registerRoutes?: (router: Router) => void;
}

export const ORDINARY: NewAccount[] = [
  { id: "acme", balanceMicros: 100_000_000, hasPaymentMethod: true },
  { id: "globex", balanceMicros: 100_000_000, hasPaymentMethod: true },
];

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "http-test-"));
  // As the server uses it: keys, accounts and models cached, charges committed in groups.
  const store = withCaches(await openTestStore(dataDir));
  const keys: Record<string, string> = {};
  const keyIds: Record<string, string> = {};
  for (const account of options.accounts ?? ORDINARY) {
    await store.accounts.create(account);
    const issued = await issueApiKey(store, account.id);
    keys[account.id] = issued.secret;
    keyIds[account.id] = issued.key.id;
  }
  const app = createApp({
    store,
    validateResponses: options.validateResponses ?? true,
    maxBodyBytes: options.maxBodyBytes ?? 16 * 1024,
    registerRoutes: options.registerRoutes ?? registerTestRoutes,
  });
  const server = http.createServer(app);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    store,
    keys,
    keyIds,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface CallOptions {
  method?: string;
  key?: string;
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string as is (with the content type given in headers). */
  body?: unknown;
}

export interface CallResult {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/** One request; the body is parsed as JSON when it is JSON. */
export async function call(server: TestServer, path: string, options: CallOptions = {}): Promise<CallResult> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  let body: string | undefined;
  if (typeof options.body === "string") body = options.body;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  const response = await fetch(server.baseUrl + path, { method: options.method ?? "GET", headers, body });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

/** A valid body for POST /v1/responses. */
export function responsesBody(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: "tiny-chat", input: "Hello", store: false, ...extra };
}

export const REQUEST_ID = /^req_[0-9a-f]{24}$/;

/** Asserts the error envelope, its status and the x-request-id every response carries. */
export function assertError(
  result: CallResult,
  expected: { status: number; code: string; type: string; param?: string | null },
): void {
  assert.equal(result.status, expected.status, result.text);
  assert.match(result.headers.get("x-request-id") ?? "", REQUEST_ID);
  assert.equal(result.body?.error?.code, expected.code, result.text);
  assert.equal(result.body.error.type, expected.type);
  assert.equal(typeof result.body.error.message, "string");
  if (expected.param !== undefined) assert.equal(result.body.error.param, expected.param);
}
