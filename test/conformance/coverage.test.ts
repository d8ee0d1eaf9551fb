/**
 * Coverage of the interface document, read from the transcript files: every operation of
 * the contract has a transcript (this check fails when one does not), every rule of the
 * catalogue is named by a transcript, every error code is expected by one (or is listed
 * below as impossible for a black-box client), every transcript is well formed and has its
 * golden, every fixture exists.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { test } from "vitest";
import { Contract, kitRoot, loadRules, loadTranscripts, staticCoverage } from "../../conformance/index.ts";
import { goldenFile } from "../../conformance/golden.ts";

const contract = Contract.load();
const rules = loadRules();
const transcripts = loadTranscripts();
const coverage = staticCoverage(transcripts, contract, rules);

/** Codes no request can provoke from outside, and why. */
const NOT_PROVOKABLE: Record<string, string> = {
  DEPLOYMENT_SCALING_UP:
    "a deployment that is still loading; the reference server loads every model at start (accepted while polling in finetune/output-model)",
  STORAGE_UNAVAILABLE: "the database or dataset storage not answering",
  REQUEST_CANCELLED: "logged for a client that hung up; nothing is sent",
};

test("every operation of the contract has a transcript", () => {
  const missing = [...coverage.operations].filter(([, ts]) => ts.length === 0).map(([op]) => op);
  assert.deepEqual(missing, [], `operations without a transcript: ${missing.join(", ")}`);
  assert.equal(coverage.operations.size, contract.operations.length);
});

test("the check fails when an operation has no transcript", () => {
  const without = transcripts.filter((t) => !t.steps.some((s) => s.request.path.includes("/metrics")));
  const partial = staticCoverage(without, contract, rules);
  const missing = [...partial.operations].filter(([, ts]) => ts.length === 0).map(([op]) => op);
  assert.deepEqual(missing.sort(), ["getDpoJobMetrics", "getSupervisedFineTuningJobMetrics"]);
});

test("every rule of the catalogue is named by a transcript, and transcripts name only catalogued rules", () => {
  const missing = [...coverage.rules].filter(([, ts]) => ts.length === 0).map(([r]) => r);
  assert.deepEqual(missing, []);
  assert.deepEqual(coverage.unknownRules, []);
});

test("every numbered rule, limit, state transition, header rule and event rule is in the catalogue", () => {
  const ids = new Set(rules.map((r) => r.id));
  const required = [
    ...[1, 2, 3, 4, 5, 6].map((n) => `responses.rule-${n}`),
    ...[1, 2, 3, 4].map((n) => `errors.rule-${n}`),
    "headers.x-request-id",
    "headers.x-provider-class",
    "headers.x-config-version",
    "headers.retry-after",
    "limits.account-id",
    "limits.job-id",
    "limits.dataset-id",
    "limits.resource-name",
    "limits.filter",
    "limits.idempotency-key",
    "limits.page-size",
    "limits.max-points",
    "limits.epochs",
    "limits.eval-carveout",
    "limits.temperature",
    "limits.top-p",
    "limits.max-output-tokens",
    "states.job.create",
    "states.job.start",
    "states.job.succeed",
    "states.job.cancel-queued",
    "states.job.cancel-running",
    "states.job.cancel-other",
    "states.dataset.ready",
    "states.dataset.failed",
    "states.response",
    "events.order",
    "events.type-equals-event",
    "events.sequence",
    "events.item-ids",
    "events.deltas",
    "events.created",
    "events.completed-usage",
    "events.no-done",
    "auth.bearer",
    "auth.x-api-key",
    "auth.invalid-key",
    "auth.suspended",
    "auth.account-scope",
    "finetune.idempotency",
    "finetune.paging",
    "finetune.filter",
    "finetune.metrics",
  ];
  assert.deepEqual(
    required.filter((id) => !ids.has(id)),
    [],
  );
});

test("every error code is expected by a transcript, or cannot be provoked from outside", () => {
  const missing = [...coverage.errorCodes].filter(([, ts]) => ts.length === 0).map(([c]) => c);
  assert.deepEqual(missing.sort(), Object.keys(NOT_PROVOKABLE).sort());
});

test("requests that match no operation are the deliberate 404 and 405 checks", () => {
  for (const u of coverage.unmatchedPaths)
    assert.ok(["errors/unknown-path", "responses/no-retrieval"].includes(u.transcript), `${u.transcript}: ${u.path}`);
});

test("every transcript has its golden, and every fixture it names exists", () => {
  const goldens = path.join(kitRoot(), "goldens");
  for (const t of transcripts) {
    if (t.id === "responses/request-too-large") continue; // needs settings.maxRequestBytes, which the recording profile leaves out
    assert.ok(existsSync(goldenFile(goldens, t.id)), `no golden for ${t.id}; run \`npm run conformance -- record\``);
  }
  const fixtures = new Set(readdirSync(path.join(kitRoot(), "fixtures")));
  for (const t of transcripts)
    for (const s of [...t.steps, ...t.cleanup]) {
      const named = [
        s.request.file,
        ...Object.values(s.request.form ?? {}).map((v) =>
          typeof v === "object" && v !== null ? (v as { file?: string }).file : undefined,
        ),
      ];
      for (const f of named) if (f !== undefined) assert.ok(fixtures.has(f), `${t.id}: fixture ${f}`);
    }
});

test("transcripts that create lists others would disturb run alone", () => {
  for (const t of transcripts)
    if (t.steps.some((s) => s.paginate?.until)) assert.ok(t.exclusive, `${t.id} pages until it has seen its own items`);
});
