/**
 * Nothing acknowledged is lost and nothing stays stuck when the server is killed: the real
 * server (`node server/main.ts`) is SIGKILLed in the middle of an upload and started again
 * on the same data directory. A version left VALIDATING is validated again on start. Work
 * of another live server process on the same directory is left to it.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, test } from "vitest";
import { startServer } from "../../server/server.ts";
import { seedKeys } from "../../harness/test-server.ts";
import { kill, startChild } from "../server/child-process.ts";
import {
  call,
  createDataset,
  getDataset,
  jsonl,
  sftRow,
  tokensOf,
  uploadAndValidate,
  uploadJsonl,
  validate,
  waitUntilSettled,
  type Target,
} from "./helpers.ts";

const scratch = mkdtempSync(path.join(os.tmpdir(), "datasets-crash-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A body that sends `bytes` of rows and then stalls, as a large upload still on its way. */
function stallingBody(bytes: number, onStall: () => void): ReadableStream<Uint8Array> {
  const chunk = Buffer.from(jsonl(Array.from({ length: 500 }, (_, i) => sftRow(`question ${i}`, `answer ${i}`))));
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= bytes) {
        onStall();
        return new Promise<void>(() => undefined);
      }
      controller.enqueue(chunk);
      sent += chunk.length;
      return undefined;
    },
  });
}

test("kill -9 mid-upload: the acknowledged version survives intact, the interrupted one is FAILED", async () => {
  const dataDir = path.join(scratch, "killed");
  const first = await startChild(dataDir);
  const t: Target = { baseUrl: first.baseUrl, key: seedKeys().acme as string, account: "acme" };

  // "kept": one acknowledged upload, not validated yet.
  const keptRows = Array.from({ length: 40 }, (_, i) => sftRow(`kept question ${i}`, `kept answer ${i}`));
  await createDataset(t, "kept");
  const kept = await uploadJsonl(t, "kept", jsonl(keptRows));
  // "cut": version 1 READY, version 2 interrupted by the kill.
  await createDataset(t, "cut");
  await uploadAndValidate(t, "cut", jsonl([sftRow("a", "b")]));
  let stalled!: () => void;
  const midway = new Promise<void>((resolve) => (stalled = resolve));
  const upload = call(t, "POST", "/datasets/cut:upload", {
    raw: stallingBody(8 * 1024 * 1024, () => stalled()),
    type: "application/jsonl",
  }).catch((error: Error) => error);
  await midway;
  const partial = path.join(dataDir, "datasets", "acme", "cut", "2.jsonl");
  await waitFor(() => existsSync(partial) && statSync(partial).size > 0);
  assert.equal((await getDataset(t, "cut")).state, "DATASET_STATE_UPLOADING");
  // Another server starting on the same DATA_DIR leaves an upload that a live process receives alone.
  const neighbour = await startChild(dataDir);
  assert.equal((await getDataset({ ...t, baseUrl: neighbour.baseUrl }, "cut")).state, "DATASET_STATE_UPLOADING");
  await kill(neighbour.child);
  await kill(first.child);
  assert.ok((await upload) instanceof Error, "the interrupted upload was never answered");

  const second = await startChild(dataDir);
  try {
    const t2 = { ...t, baseUrl: second.baseUrl };
    // The acknowledged version: byte for byte what was sent, and it validates.
    const keptFile = path.join(dataDir, "datasets", "acme", "kept", "1.jsonl");
    assert.equal(readFileSync(keptFile, "utf8"), jsonl(keptRows));
    const keptNow = await call(t2, "GET", "/datasets/kept/versions/1");
    assert.deepEqual(keptNow.body, kept);
    await validate(t2, "kept");
    const keptDataset = await waitUntilSettled(t2, "kept");
    assert.equal(keptDataset.state, "DATASET_STATE_READY");
    assert.equal(keptDataset.versions[0].exampleCount, "40");
    assert.equal(keptDataset.versions[0].estimatedTokenCount, String(tokensOf(keptRows)));

    // The interrupted version: FAILED with a reason, its partial file gone, v1 untouched.
    const cut = await getDataset(t2, "cut", "DATASET_VIEW_FULL");
    assert.equal(cut.state, "DATASET_STATE_FAILED");
    assert.deepEqual(
      cut.versions.map((v: any) => v.state),
      ["DATASET_VERSION_STATE_READY", "DATASET_VERSION_STATE_FAILED"],
    );
    assert.equal(cut.versions[1].validation.firstInvalidLine, undefined, "no line is invented");
    assert.match(cut.versions[1].validation.failureReason, /interrupted.*upload the file again/);
    assert.equal(existsSync(partial), false);
    // Uploading again goes on from there.
    assert.equal((await uploadJsonl(t2, "cut", jsonl([sftRow("c", "d")]))).versionNo, 3);
  } finally {
    await kill(second.child);
  }
});

test("a version left VALIDATING by a stop is validated again on the next start", async () => {
  const dataDir = path.join(scratch, "validating");
  const options = { dataDir, port: 0, host: "127.0.0.1", validateResponses: true, devSeed: true };
  const first = await startServer(options);
  const t: Target = { baseUrl: first.baseUrl, key: seedKeys().acme as string, account: "acme" };
  await createDataset(t, "half-done");
  await uploadJsonl(t, "half-done", jsonl([sftRow("a", "b"), sftRow("c", "d")]));
  // Moved to VALIDATING in the store only, as if the process stopped before validating it.
  await first.store.datasets.startValidation("acme", "half-done", `${process.pid}:an-earlier-server`, new Date());
  await first.close();

  const second = await startServer(options);
  try {
    const dataset = await waitUntilSettled({ ...t, baseUrl: second.baseUrl }, "half-done");
    assert.equal(dataset.state, "DATASET_STATE_READY");
    assert.equal(dataset.versions[0].exampleCount, "2");
  } finally {
    await second.close();
  }
});

async function waitFor(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) assert.fail("condition not reached in time");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
