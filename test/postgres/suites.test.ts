/**
 * The server's test suites again, on PostgreSQL: every store, datasets, fine-tuning, HTTP
 * and whole-server test file that opens a store (through test/store/test-store.ts, the
 * server harness or a child server) runs once more with TEST_STORE=postgres, so `npm test`
 * proves both stores with one command. Each file runs as its own `node --test` process
 * against one PostgreSQL (TEST_DATABASE_URL, or a throwaway cluster started here); every
 * store it opens gets a schema of its own.
 *
 * Without PostgreSQL installed this skips with a message, unless REQUIRE_POSTGRES=1 (CI).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { POSTGRES_SKIP, startCluster, type PgCluster } from "./cluster.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const FOLDERS = ["test/store", "test/datasets", "test/finetune", "test/http", "test/server"];
/** A file that reaches a store through one of these runs again on PostgreSQL. */
const USES_STORE = /startTestServer|openTestStore|startChild|storeEnvFor|databaseUrlFor/;
/** Not about the store: the docs page in a browser. */
const EXCLUDED = new Set(["test/server/docs-page.test.ts"]);

const suites = FOLDERS.flatMap((folder) =>
  readdirSync(path.join(ROOT, folder))
    .filter((name) => name.endsWith(".test.ts"))
    .map((name) => `${folder}/${name}`)
    .filter((file) => !EXCLUDED.has(file) && USES_STORE.test(readFileSync(path.join(ROOT, file), "utf8"))),
);

let cluster: PgCluster | undefined;
let databaseUrl: string;

describe("the server test suites on PostgreSQL", { skip: POSTGRES_SKIP }, () => {
  before(async () => {
    if (process.env.TEST_DATABASE_URL) {
      databaseUrl = process.env.TEST_DATABASE_URL;
    } else {
      cluster = await startCluster();
      databaseUrl = cluster.url;
    }
  });
  after(() => cluster?.destroy());

  test("finds the suites to run", () => {
    assert.ok(suites.length >= 10, `only ${suites.length} suites found: ${suites.join(", ")}`);
  });

  for (const file of suites) {
    test(file, async () => {
      const { code, output } = await runSuite(file);
      assert.equal(code, 0, `${file} failed on PostgreSQL:\n${output.slice(-20_000)}`);
    });
  }
});

function runSuite(file: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--test", "--test-reporter=spec", file], {
      cwd: ROOT,
      // Without NODE_TEST_CONTEXT: the child is a test run of its own, not a file of this one.
      env: { ...withoutTestContext(process.env), TEST_STORE: "postgres", TEST_DATABASE_URL: databaseUrl },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += String(chunk)));
    child.stderr.on("data", (chunk) => (output += String(chunk)));
    child.once("close", (code) => resolve({ code, output }));
  });
}

function withoutTestContext(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { NODE_TEST_CONTEXT: _, ...rest } = env;
  return rest;
}
