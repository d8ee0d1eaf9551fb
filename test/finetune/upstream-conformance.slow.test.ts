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
import { REFERENCE_PROFILE } from "../../harness/conformance-reference.ts";
import type { FakeFineTuning } from "../support/fake-openai-fine-tuning.ts";
import { startUpstreamTestServer, type UpstreamTestServer } from "./upstream-fixtures.ts";

let upstream: UpstreamTestServer;
let trainer: FakeFineTuning;
let server: TestServer;

beforeAll(async () => {
  upstream = await startUpstreamTestServer("sk-conformance-trainer", 30);
  ({ trainer, server } = upstream);
  for (const account of ["acme", "globex"]) await server.store.accounts.update(account, { requestsPerMinute: null });
});
afterAll(() => upstream?.close());

test("the kit's fine-tuning transcripts pass with the upstream trainer", async () => {
  const profile = loadProfile(REFERENCE_PROFILE, { baseUrl: server.baseUrl });
  profile.models = { ...profile.models, trainableBase: "big-base" };
  // The upstream's checkpoints are its own: nothing here holds one long enough to be hit over HTTP.
  delete profile.settings.checkpointingMs;
  const report = await runConformance({ profile, areas: ["finetune"] });
  console.log(
    `finetune area on the upstream trainer: ${report.passed} passed, ${report.skipped} skipped, ${report.failed} failed`,
  );
  assert.equal(report.failed, 0, textReport(report));
  assert.ok(report.passed >= 10);
  assert.ok(trainer.jobs().length > 0, "jobs went upstream");
});
