/** What the fine-tuning side uses: resolving a dataset reference, reading rows, writing derived datasets. */
import assert from "node:assert/strict";
import { afterAll, beforeAll, test } from "vitest";
import {
  createDerivedDataset,
  readTrainingRows,
  resolveDatasetVersion,
  type DatasetVersionRef,
} from "../../server/datasets/training-data.ts";
import type { ParsedRow } from "../../server/datasets/rows.ts";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";
import {
  call,
  createDataset,
  getDataset,
  jsonl,
  preferenceRow,
  sftRow,
  target,
  tokensOf,
  uploadAndValidate,
  uploadJsonl,
  type Target,
} from "./helpers.ts";

let server: TestServer;
let acme: Target;
const V1 = [sftRow("one", "1"), sftRow("two", "2")];
const V2 = [sftRow("three", "3"), sftRow("four", "4"), sftRow("five", "5")];

beforeAll(async () => {
  server = await startTestServer();
  acme = target(server);
  await createDataset(acme, "train");
  await uploadAndValidate(acme, "train", jsonl(V1));
  await uploadAndValidate(acme, "train", jsonl(V2));
});
afterAll(() => server.close());

async function rowsOf(version: DatasetVersionRef): Promise<ParsedRow[]> {
  const rows: ParsedRow[] = [];
  for await (const row of readTrainingRows(server.store, version)) rows.push(row);
  return rows;
}

test("a dataset name resolves to its latest version, a version name pins one", async () => {
  const latest = await resolveDatasetVersion(server.store, "acme", "accounts/acme/datasets/train");
  assert.deepEqual(latest, {
    name: "accounts/acme/datasets/train/versions/2",
    accountId: "acme",
    datasetId: "train",
    versionNo: 2,
    state: "DATASET_VERSION_STATE_READY",
    format: "SFT",
    exampleCount: 3,
    estimatedTokenCount: tokensOf(V2),
  });
  const pinned = await resolveDatasetVersion(server.store, "acme", "accounts/acme/datasets/train/versions/1");
  assert.equal(pinned?.versionNo, 1);
  assert.equal(pinned?.exampleCount, 2);
});

test("references that do not resolve: missing, other account, malformed, no version, deleted", async () => {
  await createDataset(acme, "empty-one");
  await createDataset(acme, "gone");
  await uploadAndValidate(acme, "gone", jsonl(V1));
  await call(acme, "DELETE", "/datasets/gone");
  for (const ref of [
    "accounts/acme/datasets/nope",
    "accounts/acme/datasets/train/versions/3",
    "accounts/acme/datasets/train/versions/0",
    "accounts/acme/datasets/train/",
    "datasets/train",
    "accounts/acme/datasets/empty-one",
    "accounts/acme/datasets/gone",
    "accounts/acme/datasets/gone/versions/1",
  ]) {
    assert.equal(await resolveDatasetVersion(server.store, "acme", ref), undefined, ref);
  }
  assert.equal(
    await resolveDatasetVersion(server.store, "globex", "accounts/acme/datasets/train"),
    undefined,
    "another account's dataset",
  );
});

test("a version that is not READY resolves with its state, for the caller to refuse", async () => {
  await createDataset(acme, "pending");
  await uploadJsonl(acme, "pending", jsonl(V1));
  const version = await resolveDatasetVersion(server.store, "acme", "accounts/acme/datasets/pending");
  assert.equal(version?.state, "DATASET_VERSION_STATE_UPLOADING");
  assert.equal(version?.format, undefined);
});

test("readTrainingRows streams the valid rows of a version in file order", async () => {
  const v1 = await resolveDatasetVersion(server.store, "acme", "accounts/acme/datasets/train/versions/1");
  const v2 = await resolveDatasetVersion(server.store, "acme", "accounts/acme/datasets/train");
  assert.deepEqual(
    await rowsOf(v1!),
    V1.map((row) => ({ format: "SFT", row })),
  );
  assert.deepEqual(
    await rowsOf(v2!),
    V2.map((row) => ({ format: "SFT", row })),
  );
});

test("createDerivedDataset writes, validates and returns a READY version", async () => {
  async function* held() {
    yield preferenceRow("q1", "good", "bad");
    yield preferenceRow("q2", "fine", "worse");
  }
  const version = await createDerivedDataset(server.store, {
    accountId: "acme",
    datasetId: "split-1",
    displayName: "held out",
    source: "DATASET_SOURCE_SPLIT",
    rows: held(),
  });
  assert.equal(version.name, "accounts/acme/datasets/split-1/versions/1");
  assert.equal(version.state, "DATASET_VERSION_STATE_READY");
  assert.equal(version.format, "PREFERENCE");
  assert.equal(version.exampleCount, 2);
  assert.equal((await rowsOf(version)).length, 2);
  const dataset = await getDataset(acme, "split-1", "DATASET_VIEW_FULL");
  assert.equal(dataset.source, "DATASET_SOURCE_SPLIT");
  assert.equal(dataset.state, "DATASET_STATE_READY");
  assert.equal(dataset.displayName, "held out");
  assert.deepEqual(await resolveDatasetVersion(server.store, "acme", "accounts/acme/datasets/split-1"), version);
});

test("createDerivedDataset with bad rows ends FAILED; a taken id is ALREADY_EXISTS", async () => {
  const version = await createDerivedDataset(server.store, {
    accountId: "acme",
    datasetId: "output-1",
    displayName: "answers",
    source: "DATASET_SOURCE_JOB_OUTPUT",
    rows: [sftRow("q", "a"), { messages: [{ role: "user", content: "no answer" }] }],
  });
  assert.equal(version.state, "DATASET_VERSION_STATE_FAILED");
  const stored = await call(acme, "GET", "/datasets/output-1/versions/1");
  assert.equal(stored.body.validation.firstInvalidLine.lineNumber, "2");
  assert.match(stored.body.validation.firstInvalidLine.reason, /^line 2: .*assistant/);
  await assert.rejects(
    createDerivedDataset(server.store, {
      accountId: "acme",
      datasetId: "train",
      displayName: "",
      source: "DATASET_SOURCE_SPLIT",
      rows: [],
    }),
    // The store's refusal as it is; the HTTP edge would answer it as ALREADY_EXISTS.
    { name: "StoreError", kind: "already-exists" },
  );
});
