/**
 * The estimate's working multiplies out (docs/contract-decisions.md, Estimate): it shows
 * `tokensPerEpoch`, the tokens of the examples that fit, so that tokensPerEpoch × epochs =
 * tokensProcessed exactly, and avgTokensPerExample is tokensPerEpoch over those examples to
 * two decimals. The audit found 1 152 (examples × the rounded average × epochs) against a
 * tokensProcessed of 1 158.
 */
import assert from "node:assert/strict";
import { afterAll, beforeAll, describe, test } from "vitest";
import { checkRow, type ParsedRow } from "../../server/datasets/rows.ts";
import { averageText } from "../../server/finetune/plan.ts";
import { exampleTokens } from "../../server/finetune/trainer.ts";
import { costMicros, formatMoney } from "../../server/store/money.ts";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";
import { call, readyDataset, type Caller } from "./fixtures.ts";

let server: TestServer;
let acme: Caller;

beforeAll(async () => {
  server = await startTestServer({ fineTuning: { runJobs: false } });
  acme = { server, account: "acme", key: server.keys.acme as string };
});
afterAll(() => server.close());

/** Rows whose token counts differ, so that their average is not a whole number. */
function unevenRows(n: number): { messages: { role: string; content: string }[] }[] {
  return Array.from({ length: n }, (_, i) => ({
    messages: [
      { role: "user", content: `Question ${i}: ${"tell me more ".repeat(1 + (i % 5))}` },
      { role: "assistant", content: `Answer ${i}. ${"Ahoy! ".repeat(1 + (i % 3))}` },
    ],
  }));
}

const tokensOf = (row: unknown) => exampleTokens((checkRow(JSON.stringify(row)) as { parsed: ParsedRow }).parsed);

async function estimate(datasetId: string, rows: unknown[], epochs: number) {
  const data = await readyDataset(acme, datasetId, rows);
  const result = await call(acme, "POST", "/supervisedFineTuningJobs:estimateCost", {
    baseModel: "accounts/maas/models/tiny-chat",
    inputDatasetVersion: data,
    config: { outputModelId: `est-${datasetId}`, epochs },
  });
  assert.equal(result.status, 200, result.text);
  return result.body.estimate;
}

describe("the estimate's working multiplies out", () => {
  test("tokensPerEpoch × epochs = tokensProcessed exactly; the average is tokensPerEpoch / examples to two decimals", async () => {
    const rows = unevenRows(37);
    const tokens = rows.map(tokensOf).reduce((a, b) => a + b, 0);
    assert.notEqual(tokens % 37, 0, "the fixture's average is not whole");
    const e = await estimate("uneven", rows, 3);
    assert.equal(e.tokensPerEpoch, String(tokens));
    assert.equal(BigInt(e.tokensPerEpoch) * BigInt(e.epochs), BigInt(e.tokensProcessed));
    assert.equal(e.avgTokensPerExample, (Math.round((tokens * 100) / 37) / 100).toFixed(2));
    assert.match(e.avgTokensPerExample, /^\d+\.\d{2}$/);
    assert.equal(e.estimatedCost.amount, formatMoney(costMicros("0.50", tokens * 3)));
  });

  test("examples that do not fit maxContextLength count in neither tokensPerEpoch nor the average", async () => {
    const fitting = unevenRows(9);
    const long = {
      messages: [
        { role: "user", content: "word ".repeat(400) },
        { role: "assistant", content: "Ahoy." },
      ],
    };
    const tokens = fitting.map(tokensOf).reduce((a, b) => a + b, 0);
    const e = await estimate("with-long", [...fitting, long], 2);
    assert.equal(e.examplesSkipped, "1");
    assert.equal(e.tokensPerEpoch, String(tokens));
    assert.equal(e.tokensProcessed, String(tokens * 2));
    assert.equal(e.avgTokensPerExample, averageText(tokens, 9));
  });
});

describe("averageText", () => {
  test("two places, rounded half up, in integer arithmetic", () => {
    assert.equal(averageText(1158, 40), "28.95");
    assert.equal(averageText(10, 3), "3.33");
    assert.equal(averageText(20, 3), "6.67");
    assert.equal(averageText(1, 8), "0.13"); // 0.125 rounds up
    assert.equal(averageText(0, 5), "0.00");
    assert.equal(averageText(7, 0), "0.00");
    assert.equal(averageText(9_007_199_254_740_991, 1), "9007199254740991.00");
  });
});
