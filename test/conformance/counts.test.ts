/**
 * One count of transcripts everywhere. A run announces (onStart) how many transcripts its
 * report will hold — every selected one and the setups they use — and reports each of them
 * once through onResult, whether it ran, was skipped, was not implemented or was never
 * started (--bail); the summary adds up to the same number. And every count of transcripts
 * the README gives is the kit's.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, test } from "vitest";
import {
  loadTranscripts,
  runConformance,
  startMockServer,
  type MockServer,
  type RunOptions,
  type RunReport,
} from "../../conformance/index.ts";
import { upstreamFaultProfile } from "../../harness/conformance-reference.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");

describe("a run's count", () => {
  let mock: MockServer;
  const profile = upstreamFaultProfile("http://127.0.0.1:9/v1");
  beforeAll(async () => {
    mock = await startMockServer({ profile });
  });
  afterAll(() => mock?.close());

  async function counted(
    options: Partial<RunOptions>,
  ): Promise<{ announced: number; reported: string[]; report: RunReport }> {
    let announced = -1;
    const reported: string[] = [];
    const report = await runConformance({
      profile,
      targetFor: mock.targetFor,
      cleanUp: false,
      onStart: ({ total }) => (announced = total),
      onResult: (r) => reported.push(r.transcript),
      ...options,
    });
    return { announced, reported, report };
  }

  const total = (r: RunReport) => r.passed + r.failed + r.skipped + r.notImplemented;

  test("the progress total, the results reported and the summary are one number, setups included", async () => {
    const { announced, reported, report } = await counted({ areas: ["finetune", "events"] });
    const setups = reported.filter((id) => id.startsWith("_setup/"));
    assert.ok(setups.length > 0, "the fine-tuning transcripts use setups");
    assert.equal(new Set(reported).size, reported.length, "each reported once");
    assert.equal(announced, reported.length);
    assert.equal(total(report), announced);
    assert.equal(report.details.length, announced);
  });

  test("transcripts outside implements count, as not implemented", async () => {
    const partial = { ...profile, implements: ["responses", "models"] };
    const { announced, reported, report } = await counted({ profile: partial, areas: ["responses", "datasets"] });
    assert.ok(report.notImplemented > 0);
    assert.equal(announced, reported.length);
    assert.equal(total(report), announced);
  });

  test("after --bail, what never started counts as skipped", async () => {
    // A profile whose primary key the mock does not know fails the first transcript that uses it.
    const broken = {
      ...profile,
      accounts: { ...profile.accounts, primary: { ...profile.accounts.primary, key: "sk-wrong" } },
    };
    const { announced, reported, report } = await counted({
      profile: broken,
      areas: ["responses"],
      stopOnFirstFailure: true,
      concurrency: 1,
    });
    assert.ok(report.failed >= 1);
    assert.ok(report.details.some((r) => r.reason?.includes("--bail")));
    assert.equal(announced, reported.length);
    assert.equal(total(report), announced);
  });
});

test("every count of transcripts in the README is the kit's", () => {
  const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");
  const all = loadTranscripts();
  const setups = all.filter((t) => t.setup).length;
  const quoted = [...readme.matchAll(/(\d+) transcripts\b/g)].map((m) => Number(m[1]));
  assert.ok(quoted.length >= 2, "the README quotes the count");
  for (const n of quoted) assert.equal(n, all.length, `"${n} transcripts" in the README; the kit has ${all.length}`);
  const split = /\*\*(\d+) transcripts\*\* \((\d+) and the (\d+) setups/.exec(readme);
  assert.ok(split, "the README splits the count into transcripts and setups");
  assert.deepEqual(split.slice(1).map(Number), [all.length, all.length - setups, setups]);
});
