/**
 * Uploads that are not kept: over the size limit (declared up front or found while
 * streaming) is 413 MEDIA_TOO_LARGE, and a client that goes away mid-upload leaves
 * nothing; in both cases neither a version nor a file remains.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, test } from "vitest";
import { assertError } from "../support/http.ts";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";
import { call, createDataset, getDataset, jsonl, sftRow, target, uploadJsonl, type Target } from "./helpers.ts";

const LIMIT = 64 * 1024;
let server: TestServer;
let acme: Target;

beforeAll(async () => {
  server = await startTestServer({ maxUploadBytes: LIMIT });
  acme = target(server);
});
afterAll(() => server.close());

/** The files kept for a dataset. */
function filesOf(datasetId: string): string[] {
  const dir = path.join(server.dataDir, "datasets", "acme", datasetId);
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

/**
 * A body sent in chunks without a Content-Length, so only reading it shows its size. With
 * `stallAfter`, it stops sending after that many bytes (and `onStall` is called) until cancelled.
 */
function chunked(totalBytes: number, stall?: { after: number; onStall: () => void }): ReadableStream<Uint8Array> {
  const line = Buffer.from(`${JSON.stringify(sftRow("question", "answer"))}\n`);
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (stall && sent >= stall.after) {
        stall.onStall();
        return new Promise<void>(() => undefined); // hangs until the request is aborted
      }
      if (sent >= totalBytes) return controller.close();
      const chunk = Buffer.concat(Array.from({ length: 64 }, () => line));
      sent += chunk.length;
      controller.enqueue(chunk);
      return undefined;
    },
  });
}

test("a body declared over the limit is 413 before anything is stored", async () => {
  await createDataset(acme, "declared");
  const r = await call(acme, "POST", "/datasets/declared:upload", {
    raw: Buffer.alloc(LIMIT + 1, "x"),
    type: "application/jsonl",
  });
  assertError(r, { status: 413, code: "MEDIA_TOO_LARGE", type: "invalid_request_error" });
  const dataset = await getDataset(acme, "declared", "DATASET_VIEW_FULL");
  assert.equal(dataset.latestVersionNo, 0);
  assert.deepEqual(dataset.versions, []);
  assert.equal(dataset.state, "DATASET_STATE_CREATING");
  assert.deepEqual(filesOf("declared"), []);
});

test("a streamed body that grows over the limit is 413, and the partial file and version are removed", async () => {
  await createDataset(acme, "streamed");
  const kept = await uploadJsonl(acme, "streamed", jsonl([sftRow("a", "b")]));
  const r = await call(acme, "POST", "/datasets/streamed:upload", {
    raw: chunked(LIMIT * 4),
    type: "application/jsonl",
  });
  assertError(r, { status: 413, code: "MEDIA_TOO_LARGE", type: "invalid_request_error" });
  const dataset = await getDataset(acme, "streamed", "DATASET_VIEW_FULL");
  assert.equal(dataset.latestVersionNo, 1, "the refused upload made no version");
  assert.deepEqual(dataset.versions, [kept]);
  assert.equal(dataset.state, "DATASET_STATE_UPLOADING", "the state is the kept version's again");
  assert.equal(dataset.totalBytes, kept.bytes);
  assert.deepEqual(filesOf("streamed"), ["1.jsonl"]);
  // The next upload takes the number the refused one would have had.
  assert.equal((await uploadJsonl(acme, "streamed", jsonl([sftRow("c", "d")]))).versionNo, 2);
});

test("a form whose file is over the limit is 413 too", async () => {
  await createDataset(acme, "big-form");
  const form = new FormData();
  form.append("file", new Blob([Buffer.alloc(LIMIT + 10, "x")]), "rows.jsonl");
  assertError(await call(acme, "POST", "/datasets/big-form:upload", { raw: form }), {
    status: 413,
    code: "MEDIA_TOO_LARGE",
    type: "invalid_request_error",
  });
  assert.deepEqual((await getDataset(acme, "big-form", "DATASET_VIEW_FULL")).versions, []);
  assert.deepEqual(filesOf("big-form"), []);
});

test("an upload the client abandons leaves neither a version nor a file", async () => {
  await createDataset(acme, "abandoned");
  const controller = new AbortController();
  let stalled!: () => void;
  const halfway = new Promise<void>((resolve) => (stalled = resolve));
  const body = chunked(LIMIT - 1, { after: LIMIT / 2, onStall: () => stalled() });
  const upload = call(acme, "POST", "/datasets/abandoned:upload", {
    raw: body,
    type: "application/jsonl",
    signal: controller.signal,
  });
  await halfway;
  // The server has begun version 1 before the client goes away.
  await waitFor(async () => (await getDataset(acme, "abandoned")).latestVersionNo === 1);
  controller.abort();
  await assert.rejects(upload, { name: "AbortError" });
  await waitFor(async () => (await getDataset(acme, "abandoned")).latestVersionNo === 0);
  assert.equal((await getDataset(acme, "abandoned")).state, "DATASET_STATE_CREATING");
  assert.deepEqual(filesOf("abandoned"), []);
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail("condition not reached in time");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
