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
 * processes or wait out timeouts: each took over 5 s in a full run on 2 cores.
 */
const SLOW = [
  "test/postgres/**/*.test.ts",
  "test/ops/readyz-postgres.test.ts",
  "test/ops/drain.test.ts",
  "test/ops/job-drain.test.ts",
  "test/client/finetune.test.ts",
  "test/cli/commands.test.ts",
  "test/server/responses-errors.test.ts",
  "test/finetune/trainer.test.ts",
  "test/local-model/train-script.test.ts",
  "test/finetune/trainer-control.test.ts",
  "test/conformance/cli.test.ts",
  "test/conformance/package.test.ts",
  "test/conformance/third-party.test.ts",
  "test/store/admin-cli.test.ts",
  "test/store/cache-processes.test.ts",
  "test/contract-diff/build.test.ts",
  "test/contract-diff/package.test.ts",
  "test/cli/browser.test.ts",
  "test/cli/terminal.test.ts",
  "test/server/docs-page.test.ts",
  "test/client/package.test.ts",
  "test/conformance/faults.test.ts",
  "test/conformance/kit.test.ts",
  "test/conformance/shared-account.test.ts",
  "test/conformance/cleanup.test.ts",
  "test/conformance/fuzz.test.ts",
  "test/conformance/dev-fault-models.test.ts",
  "test/fuzz/**/*.test.ts",
  "test/finetune/jobs.test.ts",
  "test/finetune/cancel-and-billing.test.ts",
  "test/finetune/restart.test.ts",
  "test/finetune/tuning-quality.test.ts",
  "test/datasets/large-upload.test.ts",
  "test/datasets/crash-recovery.test.ts",
  "test/readme/**/*.test.ts",
  "test/catalog/catalog-file.test.ts",
  "test/finetune/upstream-trainer.test.ts",
  "test/finetune/upstream-restart.test.ts",
  "test/finetune/upstream-conformance.test.ts",
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
