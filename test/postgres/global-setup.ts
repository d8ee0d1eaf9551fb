/**
 * vitest globalSetup of the `postgres` project: one PostgreSQL for every re-run suite
 * (TEST_DATABASE_URL if given, else a throwaway cluster started here); each store a suite
 * opens gets a schema of its own (harness/test-store.ts).
 */
import { startCluster, type PgCluster } from "../../harness/postgres-cluster.ts";

export default async function setup(): Promise<() => void> {
  let cluster: PgCluster | undefined;
  if (!process.env.TEST_DATABASE_URL) {
    cluster = await startCluster();
    process.env.TEST_DATABASE_URL = cluster.url;
  }
  return () => cluster?.destroy();
}
