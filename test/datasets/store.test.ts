/**
 * The dataset store (SQLite, or PostgreSQL with TEST_STORE=postgres)'s rules that HTTP cannot easily reach: concurrent uploads that
 * are abandoned out of order, and the owner checks recovery relies on.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, test } from "vitest";
import { newDataset } from "../store/records.ts";
import { openTestStore } from "../../harness/test-store.ts";
import type { Store } from "../../server/store/store.ts";

const dir = mkdtempSync(path.join(os.tmpdir(), "dataset-store-"));
let store: Store;
const now = () => new Date();

beforeAll(async () => {
  store = await openTestStore(dir);
  await store.accounts.create({ id: "a" });
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

test("an abandoned newest upload disappears; an abandoned older one (a later began) becomes FAILED", async () => {
  await store.datasets.create(newDataset("a", "two-at-once"));
  const v1 = await store.datasets.beginUpload("a", "two-at-once", "1:x", now());
  const v2 = await store.datasets.beginUpload("a", "two-at-once", "1:y", now());
  assert.deepEqual([v1.versionNo, v2.versionNo], [1, 2]);
  await store.datasets.abandonUpload(v1, "too large", now());
  const failed = await store.datasets.getVersion(v1);
  assert.equal(failed?.state, "DATASET_VERSION_STATE_FAILED");
  assert.deepEqual(failed?.validation.firstInvalidLine, { lineNumber: 0, reason: "too large" });
  assert.equal(
    (await store.datasets.get("a", "two-at-once"))?.state,
    "DATASET_STATE_UPLOADING",
    "the state follows the newest version",
  );
  await store.datasets.abandonUpload(v2, "gone", now());
  assert.equal(await store.datasets.getVersion(v2), undefined);
  const dataset = await store.datasets.get("a", "two-at-once");
  assert.equal(dataset?.latestVersionNo, 1);
  assert.equal(dataset?.state, "DATASET_STATE_FAILED");
});

test("failUpload and claimValidation act only for the owner they name", async () => {
  await store.datasets.create(newDataset("a", "owned"));
  const v1 = await store.datasets.beginUpload("a", "owned", "1:alive", now());
  await store.datasets.failUpload(v1, "1:someone-else", "no", now());
  assert.equal((await store.datasets.getVersion(v1))?.state, "DATASET_VERSION_STATE_UPLOADING");
  await store.datasets.completeUpload(v1, 10, now());
  const { version } = await store.datasets.startValidation("a", "owned", "1:first", now());
  assert.equal(version.owner, "1:first");
  assert.equal(await store.datasets.claimValidation(v1, "1:other", "1:second"), false);
  assert.equal(await store.datasets.claimValidation(v1, "1:first", "1:second"), true);
  assert.equal((await store.datasets.getVersion(v1))?.owner, "1:second");
});

test("a deleted dataset stays DELETED whatever its versions do", async () => {
  await store.datasets.create(newDataset("a", "deleted"));
  const v1 = await store.datasets.beginUpload("a", "deleted", "1:z", now());
  await store.datasets.markDeleted("a", "deleted", now());
  await store.datasets.completeUpload(v1, 5, now());
  const dataset = await store.datasets.get("a", "deleted");
  assert.equal(dataset?.state, "DATASET_STATE_DELETED");
  assert.equal(dataset?.totalBytes, 5);
});
