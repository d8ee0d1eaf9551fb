/**
 * The whole reference server (startServer, as `npm start` runs it) on an ephemeral port
 * over a temp data directory, seeded with server/dev-seed.json. `close()` stops the
 * server and removes the directory.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startServer, type ServerOptions } from "../../server/server.ts";
import { DEV_SEED_PATH } from "../../server/store/seed.ts";
import type { Store } from "../../server/store/store.ts";

export interface TestServer {
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

export async function startTestServer(options: Partial<ServerOptions> = {}): Promise<TestServer> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "server-test-"));
  try {
    const server = await startServer({ dataDir, port: 0, host: "127.0.0.1", validateResponses: true, devSeed: true, ...options });
    return {
      ...server,
      keys: seedKeys(),
      async close() {
        await server.close();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
}
