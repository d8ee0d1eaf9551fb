/**
 * The conformance kit's fine-tuning transcripts against the reference server whose
 * trainable base is trained upstream: `big-base` (test/finetune/upstream-fixtures.ts),
 * declared in files only, trained by the fake OpenAI-format fine-tuning API. What the
 * kit checks of the embedded trainer (states, cancel, estimate, metrics, idempotency,
 * output models) holds for the upstream trainer too.
 */
import assert from "node:assert/strict";
import { afterAll, beforeAll, test } from "vitest";
import { loadProfile, runConformance, textReport } from "../../conformance/index.ts";
import type { TestServer } from "../../harness/test-server.ts";
import { CHECKPOINT_HOLD_MS, REFERENCE_PROFILE } from "../../harness/conformance-reference.ts";
import type { FakeFineTuning } from "../support/fake-openai-fine-tuning.ts";
import { startUpstreamTestServer, type UpstreamTestServer } from "./upstream-fixtures.ts";

let upstream: UpstreamTestServer;
let trainer: FakeFineTuning;
let server: TestServer;

beforeAll(async () => {
  // The first checkpoint held as the development server holds it, so the cancel in CHECKPOINTING runs too.
  upstream = await startUpstreamTestServer("sk-conformance-trainer", 30, { checkpointHoldMs: CHECKPOINT_HOLD_MS });
  ({ trainer, server } = upstream);
  for (const account of ["acme", "globex"]) await server.store.accounts.update(account, { requestsPerMinute: null });
});
afterAll(() => upstream?.close());

test("the kit's fine-tuning transcripts pass with the upstream trainer", async () => {
  const profile = loadProfile(REFERENCE_PROFILE, { baseUrl: server.baseUrl });
  profile.models = { ...profile.models, trainableBase: "big-base" };
  profile.settings = { ...profile.settings, checkpointingMs: CHECKPOINT_HOLD_MS };
  const report = await runConformance({ profile, areas: ["finetune"] });
  console.log(
    `finetune area on the upstream trainer: ${report.passed} passed, ${report.skipped} skipped, ${report.failed} failed`,
  );
  assert.equal(report.failed, 0, textReport(report));
  // Every one of them ran: none skipped for a setting or a state the upstream trainer lacks.
  assert.equal(report.skipped, 0, textReport(report));
  assert.ok(report.passed >= 20);
  assert.ok(trainer.jobs().length > 0, "jobs went upstream");
});
