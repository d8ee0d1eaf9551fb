/**
 * A dataset's life over real HTTP: create, upload (raw and as a form), validate in the
 * background to READY or FAILED, versions, the two views, delete, and the errors of each step.
 */
import assert from "node:assert/strict";
import { afterAll, beforeAll, test } from "vitest";
import { assertError, INVALID_REQUEST, NOT_FOUND } from "../support/http.ts";
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
  validate,
  waitUntilSettled,
  type Target,
} from "./helpers.ts";

let server: TestServer;
let acme: Target;

beforeAll(async () => {
  server = await startTestServer();
  acme = target(server);
});
afterAll(() => server.close());

const GOOD_ROWS = [
  {
    messages: [
      { role: "system", content: "You are terse." },
      { role: "user", content: "What is an API?" },
      { role: "assistant", content: "A contract between programs." },
    ],
  },
  sftRow("2+2?", "4"),
  sftRow("Capital of France?", "Paris."),
];

test("create answers the dataset in CREATING with source UPLOAD and no version", async () => {
  const dataset = await createDataset(acme, "created", "My rows");
  assert.equal(dataset.name, "accounts/acme/datasets/created");
  assert.equal(dataset.datasetId, "created");
  assert.equal(dataset.displayName, "My rows");
  assert.equal(dataset.source, "DATASET_SOURCE_UPLOAD");
  assert.equal(dataset.state, "DATASET_STATE_CREATING");
  assert.equal(dataset.latestVersionNo, 0);
  assert.equal(dataset.totalBytes, "0");
  assert.equal(dataset.versions, undefined, "the basic view has no versions");
  assert.equal((await createDataset(acme, "unnamed")).displayName, "");
});

test("a good supervised file ends READY with the counts the tokenizer gives", async () => {
  await createDataset(acme, "good-sft");
  const text = jsonl(GOOD_ROWS) + "\n"; // a trailing blank line is not a row
  const version = await uploadJsonl(acme, "good-sft", text);
  assert.equal(version.name, "accounts/acme/datasets/good-sft/versions/1");
  assert.equal(version.state, "DATASET_VERSION_STATE_UPLOADING");
  assert.equal(version.bytes, String(Buffer.byteLength(text)));
  assert.deepEqual(version.validation, { totalLines: "0", validLines: "0" }, "nothing is known before validation");
  assert.equal((await getDataset(acme, "good-sft")).state, "DATASET_STATE_UPLOADING");

  const validating = await validate(acme, "good-sft");
  assert.equal(validating.state, "DATASET_STATE_VALIDATING");
  const dataset = await waitUntilSettled(acme, "good-sft");
  assert.equal(dataset.state, "DATASET_STATE_READY");
  assert.equal(dataset.totalBytes, String(Buffer.byteLength(text)));
  const ready = dataset.versions[0];
  assert.equal(ready.state, "DATASET_VERSION_STATE_READY");
  assert.deepEqual(ready.validation, { totalLines: "3", validLines: "3" });
  assert.equal(ready.exampleCount, "3");
  assert.equal(ready.estimatedTokenCount, String(tokensOf(GOOD_ROWS)));
  assert.deepEqual(ready.topLevelKeys, ["messages"]);
  assert.equal(ready.format, "SFT");
});

test("a bad line 7 fails validation, reported with its number and a reason a person can act on", async () => {
  await createDataset(acme, "bad-line");
  const rows: unknown[] = Array.from({ length: 10 }, (_, i) => sftRow(`q${i}`, `a${i}`));
  rows[6] = {
    messages: [
      { role: "user", content: "hi" },
      { role: "robot", content: "beep" },
    ],
  };
  rows[8] = "{not json";
  const dataset = await uploadAndValidate(acme, "bad-line", jsonl(rows));
  assert.equal(dataset.state, "DATASET_STATE_FAILED");
  const failed = dataset.versions[0];
  assert.equal(failed.state, "DATASET_VERSION_STATE_FAILED");
  assert.equal(failed.validation.totalLines, "10");
  assert.equal(failed.validation.validLines, "8");
  assert.equal(failed.validation.firstInvalidLine.lineNumber, "7");
  assert.equal(
    failed.validation.firstInvalidLine.reason,
    'line 7: "messages[1].role" is "robot"; it must be "system", "user" or "assistant"',
  );
});

test("preference rows are recognised as PREFERENCE", async () => {
  await createDataset(acme, "prefs");
  const dataset = await uploadAndValidate(
    acme,
    "prefs",
    jsonl([preferenceRow("Hi?", "Hello!", "Go away."), preferenceRow("2+2?", "4", "5")]),
  );
  assert.equal(dataset.state, "DATASET_STATE_READY");
  assert.equal(dataset.versions[0].format, "PREFERENCE");
  assert.deepEqual(dataset.versions[0].topLevelKeys, ["input", "non_preferred_output", "preferred_output"]);
});

test("an empty file fails as a whole, with a reason and no invented line number", async () => {
  await createDataset(acme, "empty");
  const dataset = await uploadAndValidate(acme, "empty", "\n\n");
  assert.equal(dataset.state, "DATASET_STATE_FAILED");
  assert.equal(dataset.versions[0].validation.firstInvalidLine, undefined);
  assert.match(dataset.versions[0].validation.failureReason, /no rows/);
});

test("a form upload takes the file from its part named file", async () => {
  await createDataset(acme, "form");
  const form = new FormData();
  form.append("note", "ignored");
  form.append("file", new Blob([jsonl(GOOD_ROWS)], { type: "application/jsonl" }), "rows.jsonl");
  const r = await call(acme, "POST", "/datasets/form:upload", { raw: form });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.bytes, String(Buffer.byteLength(jsonl(GOOD_ROWS))));
  await validate(acme, "form");
  assert.equal((await waitUntilSettled(acme, "form")).versions[0].exampleCount, "3");

  const noFile = new FormData();
  noFile.append("other", new Blob(["x"]), "x.jsonl");
  const missing = await call(acme, "POST", "/datasets/form:upload", { raw: noFile });
  assertError(missing, INVALID_REQUEST);
  assert.equal(missing.body.error.param, "file");
  assert.equal((await getDataset(acme, "form")).latestVersionNo, 1, "a refused form makes no version");
});

test("octet-stream uploads work too; each upload is the next version and validation takes the latest", async () => {
  await createDataset(acme, "versions");
  const first = await uploadJsonl(acme, "versions", jsonl([sftRow("a", "b")]), "application/octet-stream");
  const second = await uploadJsonl(acme, "versions", jsonl([sftRow("a", "b"), sftRow("c", "d")]));
  assert.deepEqual([first.versionNo, second.versionNo], [1, 2]);
  await validate(acme, "versions");
  const dataset = await waitUntilSettled(acme, "versions");
  assert.equal(dataset.latestVersionNo, 2);
  assert.deepEqual(
    dataset.versions.map((v: any) => [v.versionNo, v.state]),
    [
      [1, "DATASET_VERSION_STATE_UPLOADING"],
      [2, "DATASET_VERSION_STATE_READY"],
    ],
  );
  assert.equal(dataset.totalBytes, String(Number(first.bytes) + Number(second.bytes)));
  const v2 = await call(acme, "GET", "/datasets/versions/versions/2");
  assert.equal(v2.status, 200, v2.text);
  assert.equal(v2.body.exampleCount, "2");
  assertError(await call(acme, "GET", "/datasets/versions/versions/3"), NOT_FOUND);
  assertError(await call(acme, "GET", "/datasets/nope/versions/1"), NOT_FOUND);
});

test("the basic view is the dataset alone; the full view adds versions and jobs", async () => {
  await createDataset(acme, "views");
  await uploadAndValidate(acme, "views", jsonl(GOOD_ROWS));
  const basic = await getDataset(acme, "views");
  assert.equal(basic.versions, undefined);
  assert.equal(basic.jobs, undefined);
  assert.deepEqual(await getDataset(acme, "views", "DATASET_VIEW_BASIC"), basic);
  const full = await getDataset(acme, "views", "DATASET_VIEW_FULL");
  assert.equal(full.versions.length, 1);
  assert.deepEqual(full.jobs, []);
  const { versions: _v, jobs: _j, ...rest } = full;
  assert.deepEqual(rest, basic);
});

test("validateUpload needs an uploaded version", async () => {
  await createDataset(acme, "no-version");
  assertError(await call(acme, "POST", "/datasets/no-version:validateUpload", { json: {} }), INVALID_REQUEST);
  assertError(await call(acme, "POST", "/datasets/missing:validateUpload", { json: {} }), NOT_FOUND);
  assertError(
    await call(acme, "POST", "/datasets/missing:upload", { raw: "{}\n", type: "application/jsonl" }),
    NOT_FOUND,
  );
});

test("delete is soft: DELETED, again unchanged, still readable, no more uploads", async () => {
  await createDataset(acme, "doomed");
  await uploadAndValidate(acme, "doomed", jsonl(GOOD_ROWS));
  const deleted = await call(acme, "DELETE", "/datasets/doomed");
  assert.equal(deleted.status, 200, deleted.text);
  assert.equal(deleted.body.state, "DATASET_STATE_DELETED");
  const again = await call(acme, "DELETE", "/datasets/doomed");
  assert.deepEqual(again.body, deleted.body, "deleting again returns it unchanged");
  assert.deepEqual(await getDataset(acme, "doomed"), deleted.body);
  assert.equal(
    (await getDataset(acme, "doomed", "DATASET_VIEW_FULL")).versions[0].state,
    "DATASET_VERSION_STATE_READY",
  );
  assertError(
    await call(acme, "POST", "/datasets/doomed:upload", { raw: jsonl(GOOD_ROWS), type: "application/jsonl" }),
    INVALID_REQUEST,
  );
  assertError(await call(acme, "POST", "/datasets/doomed:validateUpload", { json: {} }), INVALID_REQUEST);
  assertError(await call(acme, "DELETE", "/datasets/never-was"), NOT_FOUND);
});

test("an id is taken for good: a duplicate, even of a deleted dataset, is 409 ALREADY_EXISTS", async () => {
  await createDataset(acme, "taken");
  assertError(await call(acme, "POST", "/datasets", { json: { datasetId: "taken", dataset: {} } }), {
    status: 409,
    code: "ALREADY_EXISTS",
    type: "invalid_request_error",
  });
  await call(acme, "DELETE", "/datasets/taken");
  assertError(await call(acme, "POST", "/datasets", { json: { datasetId: "taken", dataset: {} } }), {
    status: 409,
    code: "ALREADY_EXISTS",
    type: "invalid_request_error",
  });
  const bad = await call(acme, "POST", "/datasets", { json: { datasetId: "Not_Valid", dataset: {} } });
  assertError(bad, INVALID_REQUEST);
  assert.equal(bad.body.error.param, "datasetId");
});

test("another account's datasets are out of reach: 403 on its paths, invisible to its own", async () => {
  await createDataset(acme, "private");
  const globex = target(server, "globex");
  const intruder = { ...globex, account: "acme" };
  assertError(await call(intruder, "GET", "/datasets/private"), {
    status: 403,
    code: "OPERATION_NOT_ALLOWED",
    type: "permission_error",
  });
  assertError(await call(intruder, "GET", "/datasets"), {
    status: 403,
    code: "OPERATION_NOT_ALLOWED",
    type: "permission_error",
  });
  assertError(await call(intruder, "POST", "/datasets/private:upload", { raw: "{}\n", type: "application/jsonl" }), {
    status: 403,
    code: "OPERATION_NOT_ALLOWED",
    type: "permission_error",
  });
  assertError(await call(globex, "GET", "/datasets/private"), NOT_FOUND);
  const list = await call(globex, "GET", "/datasets");
  assert.equal(list.body.totalSize, 0);
  // The same id is free in another account.
  assert.equal((await createDataset(globex, "private")).name, "accounts/globex/datasets/private");
});

test("a NUL character (U+0000), which PostgreSQL cannot hold, is refused alike on both stores", async () => {
  const named = await call(acme, "POST", "/datasets", {
    json: { datasetId: "nul", dataset: { displayName: "a\u0000b" } },
  });
  assertError(named, INVALID_REQUEST);
  assert.equal(named.body.error.param, "dataset.displayName");
  assertError(await call(acme, "GET", "/datasets/ab%00c"), INVALID_REQUEST);
  assertError(await call(acme, "GET", "/datasets?filter=state:READY%00"), INVALID_REQUEST);
  const estimate = await call(acme, "POST", "/supervisedFineTuningJobs:estimateCost", {
    json: {
      baseModel: "accounts/maas/models/tiny-chat",
      inputDatasetVersion: "accounts/acme/datasets/a\u0000b",
      config: { outputModelId: "nul-model" },
    },
  });
  assertError(estimate, NOT_FOUND);
  assert.equal(estimate.body.error.param, "inputDatasetVersion");
});
