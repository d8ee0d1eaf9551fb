/**
 * The live status line of `jobs watch` fits a 120-column terminal in its widest form (issue
 * 42: it was cut at 120 columns). The terminal test watches a two-epoch job, whose line is
 * short; this one renders the longest line a job can produce through the same format, payload
 * and bar size the watch uses.
 */
import assert from "node:assert/strict";
import { test } from "vitest";
import type { TrainingJob } from "../../client/index.ts";
import type { Curve } from "../../cli/job-collections.ts";
import { STATUS_FORMAT, STATUS_TEXT_WIDTH, statusBarSize, statusPayload } from "../../cli/watch.ts";

/** What cli-progress prints for a format: each `{name}` replaced by its value. */
function render(values: Record<string, string>): string {
  return STATUS_FORMAT.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = values[name];
    assert.ok(value !== undefined, `the format's {${name}} has a value`);
    return value;
  });
}

/** The widest job: the longest state, 100 epochs (the server's most), a billion tokens, both losses above 10, hours. */
const widest = {
  state: "JOB_STATE_CHECKPOINTING",
  jobType: "JOB_TYPE_PREFERENCE",
  progress: { epoch: 100, totalEpochs: 100, percent: 100, processedTokens: "1234567890" },
} as unknown as TrainingJob;
const curve = {
  points: [{ step: 123456, loss: 12.3456789 }],
  evaluationPoints: [{ step: 123456, loss: 12.3456789 }],
} as unknown as Curve;

test("the widest status line, bar included, fits 120 columns", () => {
  const payload = statusPayload(widest, curve, performance.now() - 10 * 3_600_000);
  const columns = 120;
  const line = render({ ...payload, bar: "█".repeat(statusBarSize(columns)), percentage: "100" });
  assert.ok(line.length <= columns, `${line.length} columns: ${line}`);
  const withoutBar = render({ ...payload, bar: "", percentage: "100" });
  assert.ok(withoutBar.length <= STATUS_TEXT_WIDTH, `the text without its bar is ${withoutBar.length} columns`);
});

test("a narrow terminal still gets a bar of 10", () => {
  assert.equal(statusBarSize(80), 10);
  assert.equal(statusBarSize(200), 40);
});
