/**
 * The conformance kit's fine-tuning transcripts against the reference server whose
 * trainable base is trained upstream: `big-base` (test/finetune/upstream-fixtures.ts),
 * declared in files only, trained by the fake OpenAI-format fine-tuning API. What the
 * kit checks of the embedded trainer (states, cancel, estimate, metrics, idempotency,
 * output models) holds for the upstream trainer too.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, test } from "vitest";
import { loadProfile, runConformance, textReport } from "../../conformance/index.ts";
import { startFakeUpstream, type FakeUpstream } from "../server/fake-upstream.ts";
import { startTestServer, type TestServer } from "../server/harness.ts";
import { REFERENCE_PROFILE } from "../conformance/reference.ts";
import { startFakeFineTuning, type FakeFineTuning } from "../support/fake-openai-fine-tuning.ts";
import { KEY_ENV, UPSTREAM_BASE, upstreamCatalog, upstreamRouting } from "./upstream-fixtures.ts";

const scratch = mkdtempSync(path.join(os.tmpdir(), "upstream-conformance-"));
let trainer: FakeFineTuning;
let inference: FakeUpstream;
let server: TestServer;

beforeAll(async () => {
  process.env[KEY_ENV] = "sk-conformance-trainer";
  trainer = await startFakeFineTuning({ models: [UPSTREAM_BASE], apiKey: process.env[KEY_ENV], stepMs: 30 });
  inference = await startFakeUpstream({ kind: "stream", text: "The base model answers." });
  const catalogFile = path.join(scratch, "catalog.json");
  writeFileSync(catalogFile, JSON.stringify(upstreamCatalog(trainer.baseUrl)));
  server = await startTestServer({
    catalogFile,
    routing: upstreamRouting(inference.baseUrl),
    fineTuning: { pollMs: 20 },
  });
  for (const account of ["acme", "globex"]) await server.store.accounts.update(account, { requestsPerMinute: null });
});
afterAll(async () => {
  await server?.close();
  await trainer?.close();
  await inference?.close();
  rmSync(scratch, { recursive: true, force: true });
});

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
