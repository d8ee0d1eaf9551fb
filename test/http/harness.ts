/**
 * The HTTP app alone for the HTTP layer's tests: createApp with the test-only routes of
 * test-routes.ts over a SQLite store (PostgreSQL with TEST_STORE=postgres) in a temp directory,
 * on an ephemeral port, with accounts and one key each. `close()` stops everything it started.
 * The whole server as `npm start` runs it is harness/test-server.ts's startTestServer.
 */
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import type { OperationHandlers } from "../../server/http/operation-routes.ts";
import { createApp } from "../../server/http/app.ts";
import { issueApiKey } from "../../server/store/api-keys.ts";
import { withCaches } from "../../server/store/cache/cached-store.ts";
import { openTestStore } from "../../harness/test-store.ts";
import type { NewAccount, Store } from "../../server/store/store.ts";
import { type Reply, request, type RequestOptions } from "../support/http.ts";
import { listenLocally } from "../../harness/listen.ts";
import { registerTestRoutes } from "./test-routes.ts";

export interface AppServer {
  baseUrl: string;
  store: Store;
  /** The secret of each account's key, by account id. */
  keys: Record<string, string>;
  /** The key id of each account's key. */
  keyIds: Record<string, string>;
  close(): Promise<void>;
}

export interface AppServerOptions {
  accounts?: NewAccount[];
  maxBodyBytes?: number;
  validateResponses?: boolean;
  registerRoutes?: (handlers: OperationHandlers) => void;
}

export const ORDINARY: NewAccount[] = [
  { id: "acme", balanceMicros: 100_000_000, hasPaymentMethod: true },
  { id: "globex", balanceMicros: 100_000_000, hasPaymentMethod: true },
];

export async function startAppServer(options: AppServerOptions = {}): Promise<AppServer> {
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
  const server = await listenLocally(http.createServer(app));
  return {
    baseUrl: server.origin,
    store,
    keys,
    keyIds,
    async close() {
      await server.close();
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** One request to the server; the body is parsed as JSON when it is JSON (test/support/http.ts). */
export function call(server: AppServer, path: string, options: RequestOptions = {}): Promise<Reply> {
  return request(server.baseUrl + path, options);
}

/** A valid body for POST /v1/responses. */
export function responsesBody(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: "tiny-chat", input: "Hello", store: false, ...extra };
}
