/**
 * Three projects: `fast` (no PostgreSQL, browser, tmux or long matrix: the loop for someone
 * changing one module), `slow` (the rest) and `postgres` (the store-using suites again on
 * PostgreSQL). `npm run test:fast`, `npm run test:slow`, and `npm test` for all three.
 */
import { fileURLToPath } from "node:url";
import { defineConfig, type TestProjectInlineConfiguration } from "vitest/config";
import { POSTGRES_SKIP } from "./harness/postgres-cluster.ts";
import { storeSuites } from "./test/postgres/store-suites.ts";

const ROOT = fileURLToPath(new URL(".", import.meta.url));

/**
 * Files that need PostgreSQL, a browser or tmux, run a long matrix, train for real, start
 * processes or wait out timeouts (each took over 5 s in a full run on 2 cores): whole
 * folders that are all slow, and elsewhere a file named `*.slow.test.ts`. A new slow test
 * is named so; nothing here lists files.
 */
const SLOW = [
  "test/postgres/**/*.test.ts",
  "test/fuzz/**/*.test.ts",
  "test/readme/**/*.test.ts",
  "test/**/*.slow.test.ts",
];

/** The store-using suites again on PostgreSQL; without PostgreSQL (and without REQUIRE_POSTGRES=1) it holds nothing. */
const postgres: TestProjectInlineConfiguration = {
  extends: true,
  test: {
    name: "postgres",
    include: POSTGRES_SKIP ? [] : storeSuites(ROOT),
    env: { TEST_STORE: "postgres" },
    globalSetup: POSTGRES_SKIP ? [] : ["test/postgres/global-setup.ts"],
  },
};
if (POSTGRES_SKIP) console.warn(`skipped: the store suites on PostgreSQL: ${POSTGRES_SKIP}`);

export default defineConfig({
  test: {
    // node:test had no default timeout; servers, training and PostgreSQL clusters take seconds.
    testTimeout: 600_000,
    hookTimeout: 600_000,
    restoreMocks: true,
    // Each file in a process of its own, as node --test ran them: servers and stores stay apart.
    pool: "forks",
    reporters: process.env.CI ? ["default", ["junit", { outputFile: "reports/junit.xml" }]] : ["default"],
    projects: [
      // Workers reused across files (isolate: false): process start-up was most of the fast tier's time.
      // Two workers on 2 cores: vitest's default (cores - 1) ran the tier one file at a time (70 s);
      // measured on an idle machine, 2 workers 48 s, 3 workers 53 s, 4 workers 52 s.
      {
        extends: true,
        test: { name: "fast", include: ["test/**/*.test.ts"], exclude: SLOW, isolate: false, maxWorkers: 2 },
      },
      { extends: true, test: { name: "slow", include: SLOW } },
      postgres,
    ],
  },
});
