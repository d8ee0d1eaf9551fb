/**
 * The test files that reach a store (through harness/test-store.ts, the server harness
 * or a child server): vitest's `postgres` project runs them again with TEST_STORE=postgres,
 * so `npm test` proves both stores with one command.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

const FOLDERS = ["test/store", "test/datasets", "test/finetune", "test/http", "test/server", "test/catalog"];
/**
 * A file that reaches a store through one of these runs again on PostgreSQL; `start…TestServer`
 * takes in the fixtures that wrap the harness (test/finetune/upstream-fixtures.ts).
 */
const USES_STORE = /start\w*TestServer|openTestStore|startChild|storeEnvFor|databaseUrlFor/;
/** Not about the store: the docs page in a browser. */
const EXCLUDED = new Set(["test/server/docs-page.slow.test.ts"]);
/**
 * Reach a store from a helper rather than the file itself: the hostile-input fuzzer (its
 * server is harness/fuzz/reference.ts's), which on PostgreSQL found a NUL character answered 500.
 */
const ALSO = ["test/fuzz/server.test.ts"];

export function storeSuites(root: string): string[] {
  const found = FOLDERS.flatMap((folder) =>
    readdirSync(path.join(root, folder))
      .filter((name) => name.endsWith(".test.ts"))
      .map((name) => `${folder}/${name}`)
      .filter((file) => !EXCLUDED.has(file) && USES_STORE.test(readFileSync(path.join(root, file), "utf8"))),
  );
  return [...found, ...ALSO];
}
