/**
 * The whole reference server (startServer, as `npm start` runs it) on an ephemeral port
 * over a temp data directory, seeded with server/dev-seed.json. `close()` stops the
 * server and removes the directory (and puts the committed catalogue back when the server
 * had a catalogue file of its own).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { installCatalog } from "../server/inference/catalog.ts";
import { loadCatalogFile } from "../server/inference/catalog-file.ts";
import { startServer, type ServerOptions } from "../server/server.ts";
import { DEV_SEED_PATH } from "../server/store/seed.ts";
import type { Store } from "../server/store/store.ts";
import { databaseUrlFor } from "./test-store.ts";

export interface TestServer {
  /** The temp directory the server's data lives in. */
  dataDir: string;
  origin: string;
  baseUrl: string;
  store: Store;
  /** The first demo key of each seed account, by account id. */
  keys: Record<string, string>;
  close(): Promise<void>;
}

export function seedKeys(): Record<string, string> {
  const seed = JSON.parse(readFileSync(DEV_SEED_PATH, "utf8")) as { accounts: { id: string; keys: string[] }[] };
  return Object.fromEntries(seed.accounts.map((a) => [a.id, a.keys[0] as string]));
}

export interface TestServerOptions extends Partial<ServerOptions> {
  /** A routing configuration, written to a file in the temp directory and used instead of server/routing.json. */
  routing?: unknown;
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const scratch = mkdtempSync(path.join(os.tmpdir(), "server-test-"));
  const dataDir = path.join(scratch, "data");
  try {
    const { routing, ...serverOptions } = options;
    if (routing !== undefined) {
      serverOptions.routingFile = path.join(scratch, "routing.json");
      writeFileSync(serverOptions.routingFile, JSON.stringify(routing));
    }
    // TEST_STORE=postgres: the records go to a PostgreSQL schema of this server's own (harness/test-store.ts).
    const databaseUrl = await databaseUrlFor(dataDir);
    // A short statement timeout, so that a test holding a lock sees 503 in seconds, not 15.
    const postgres = databaseUrl ? { statementTimeoutMs: 2_000 } : undefined;
    // No access line per request on the test's stderr (tests of the log ask for it: accessLog: true).
    const server = await startServer({
      dataDir,
      databaseUrl,
      postgres,
      port: 0,
      host: "127.0.0.1",
      validateResponses: true,
      devSeed: true,
      accessLog: false,
      ...serverOptions,
    });
    return {
      ...server,
      dataDir,
      keys: seedKeys(),
      async close() {
        await server.close();
        // One catalogue per process: the next test file in this worker (the fast tier shares
        // workers, isolate: false) would otherwise find this server's models, not the committed ones.
        if (serverOptions.catalogFile !== undefined) installCatalog(loadCatalogFile());
        rmSync(scratch, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(scratch, { recursive: true, force: true });
    throw error;
  }
}
