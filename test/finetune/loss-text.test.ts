/**
 * Loss on the training curve is a `DecimalString`: decimal text without an exponent
 * (docs/decisions.md), whatever the number. Proven over HTTP on curve points written
 * straight to the store (a server that runs no jobs keeps the job as created), with the
 * server checking its responses against the contract.
 */
import assert from "node:assert/strict";
import { afterAll, beforeAll, test } from "vitest";
import { lossText } from "../../server/finetune/wire.ts";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";
import { ahoyRows, call, createSftJob, readyDataset, type Caller } from "./fixtures.ts";

const DECIMAL_STRING = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/;
const LOSSES = [2.302585, 0.5, 1e-7, 3.2e-9, 5e-324, 0, 1234.5678, 1e21, 1.7976931348623157e308];

let server: TestServer;
let acme: Caller;
let job: string;

beforeAll(async () => {
  server = await startTestServer({ fineTuning: { runJobs: false } });
  acme = { server, account: "acme", key: server.keys.acme as string };
  const data = await readyDataset(acme, "few", ahoyRows(4));
  const created = await createSftJob(acme, data, { outputModelId: "curve" });
  job = created.body.jobId;
  const time = new Date();
  await server.store.fineTuning.appendCurve(
    "acme",
    job,
    "training",
    LOSSES.map((loss, i) => ({ step: i + 1, epoch: 1, loss, learningRate: 0.01, time })),
  );
  await server.store.fineTuning.appendCurve("acme", job, "evaluation", [
    { step: 9, epoch: 1, loss: 4e-8, learningRate: 0.01, time },
  ]);
});
afterAll(() => server.close());

/** Within a relative 1e-6, or both 0 (six significant digits are kept). */
function close(text: string, expected: number): boolean {
  const value = Number(text);
  return expected === 0 ? value === 0 : Math.abs(value - expected) / Math.abs(expected) < 1e-6;
}

test("every loss on the curve is decimal text without an exponent, very small and very large ones too", async () => {
  const curve = await call(acme, "GET", `/supervisedFineTuningJobs/${job}/metrics`);
  assert.equal(curve.status, 200, curve.text);
  const losses = curve.body.points.map((p: { loss: string }) => p.loss);
  assert.equal(losses.length, LOSSES.length);
  for (const [i, loss] of losses.entries()) {
    assert.match(loss, DECIMAL_STRING, `loss of ${LOSSES[i]}`);
    assert.ok(close(loss, LOSSES[i] as number), `${loss} for ${LOSSES[i]}`);
  }
  assert.equal(losses[0], "2.302585");
  assert.equal(losses[2], "0.0000001", "a small loss keeps its digits instead of rounding to 0.000000");
  assert.equal(losses[5], "0.000000");
  assert.equal(losses[7], "1000000000000000000000.000000");
  const [evaluation] = curve.body.evaluationPoints;
  assert.match(evaluation.loss, DECIMAL_STRING);
  assert.ok(close(evaluation.loss, 4e-8), evaluation.loss);
});

test("the formatter: six decimals, six significant digits below that, no minus zero, no exponent", () => {
  assert.equal(lossText(0.1234567), "0.123457");
  assert.equal(lossText(3.2e-9), "0.0000000032");
  assert.equal(lossText(1.23456789e-12), "0.00000000000123457");
  assert.equal(lossText(-0), "0.000000");
  assert.equal(lossText(-4e-10), "-0.0000000004");
  assert.equal(lossText(123456789012345680000), "123456789012345683968.000000");
  assert.match(lossText(5e-324), DECIMAL_STRING);
  assert.throws(() => lossText(Number.NaN), RangeError);
  assert.throws(() => lossText(Number.POSITIVE_INFINITY), RangeError);
});
