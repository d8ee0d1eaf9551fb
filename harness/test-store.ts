/**
 * Which store the tests run on. `TEST_STORE=postgres` runs them on PostgreSQL: the server
 * at `TEST_DATABASE_URL`, or else a throwaway cluster started for this test process
 * (harness/postgres-cluster.ts). Every store a test opens gets a schema of its own, so test
 * files and tests never see each other's rows; a data directory keeps its schema for as
 * long as the process lives, so a test that reopens (or restarts a server on) the same
 * directory finds its data again, as with SQLite.
 *
 * Without `TEST_STORE=postgres` everything is SQLite, as before.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { openStore, type StoreConfig } from "../server/store/open.ts";
import type { VersionedStore } from "../server/store/store.ts";
import { startCluster } from "./postgres-cluster.ts";

export const onPostgres = process.env.TEST_STORE === "postgres";

let server: Promise<string> | undefined;

/** The PostgreSQL server tests use: TEST_DATABASE_URL, or a cluster started once for this process. */
export function testServerUrl(): Promise<string> {
  server ??= process.env.TEST_DATABASE_URL
    ? Promise.resolve(process.env.TEST_DATABASE_URL)
    : startCluster().then((cluster) => cluster.url);
  return server;
}

/** A URL whose connections see only a new, empty schema of the test server. */
export async function freshSchemaUrl(baseUrl?: string): Promise<string> {
  const url = baseUrl ?? (await testServerUrl());
  const schema = `test_${randomBytes(6).toString("hex")}`;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA ${schema}`);
  } finally {
    await client.end();
  }
  return withSearchPath(url, schema);
}

export function withSearchPath(url: string, schema: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set("options", `-c search_path=${schema}`);
  return parsed.toString();
}

const schemas = new Map<string, Promise<string>>();

/** The database URL for a data directory (the same one every time), or undefined on SQLite. */
export async function databaseUrlFor(dataDir: string): Promise<string | undefined> {
  if (!onPostgres) return undefined;
  let url = schemas.get(dataDir);
  if (!url) {
    url = freshSchemaUrl();
    schemas.set(dataDir, url);
  }
  return url;
}

/** The store configuration for a data directory: SQLite in it, or PostgreSQL in its own schema. */
export async function storeConfigFor(dataDir: string): Promise<StoreConfig> {
  return { dataDir, databaseUrl: await databaseUrlFor(dataDir) };
}

/** Opens the test store for a data directory (see above). */
export async function openTestStore(dataDir: string): Promise<VersionedStore> {
  return openStore(await storeConfigFor(dataDir));
}

/** Environment for a child process (server, worker, admin command) using the directory's store. */
export async function storeEnvFor(dataDir: string): Promise<Record<string, string>> {
  const url = await databaseUrlFor(dataDir);
  return url ? { DATA_DIR: dataDir, DATABASE_URL: url } : { DATA_DIR: dataDir };
}
