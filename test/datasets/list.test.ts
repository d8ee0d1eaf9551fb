/** The dataset list: newest first, paging with opaque tokens bound to their parameters, the state filter. */
import assert from "node:assert/strict";
import { afterAll, beforeAll, test } from "vitest";
import { assertError, INVALID_REQUEST } from "../support/http.ts";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";
import { call, createDataset, jsonl, sftRow, target, uploadAndValidate, type Target } from "./helpers.ts";

let server: TestServer;
let acme: Target;
const IDS = Array.from({ length: 250 }, (_, i) => `ds-${String(i).padStart(3, "0")}`);

beforeAll(async () => {
  server = await startTestServer();
  acme = target(server);
  for (const id of IDS) await createDataset(acme, id);
  // Two READY datasets and a deleted one among them.
  await uploadAndValidate(acme, "ds-010", jsonl([sftRow("a", "b")]));
  await uploadAndValidate(acme, "ds-200", jsonl([sftRow("a", "b")]));
  assert.equal((await call(acme, "DELETE", "/datasets/ds-100")).status, 200);
});
afterAll(() => server.close());

async function page(query: string): Promise<any> {
  const r = await call(acme, "GET", `/datasets${query}`);
  assert.equal(r.status, 200, r.text);
  return r.body;
}

test("paging 249 live datasets by 100 returns each exactly once, newest first", async () => {
  const seen: string[] = [];
  const sizes: number[] = [];
  let token = "";
  do {
    const body = await page(`?pageSize=100${token ? `&pageToken=${encodeURIComponent(token)}` : ""}`);
    assert.equal(body.totalSize, 249, "the deleted dataset is left out unless asked for");
    seen.push(...body.datasets.map((d: any) => d.datasetId));
    sizes.push(body.datasets.length);
    token = body.nextPageToken;
  } while (token !== "");
  assert.deepEqual(sizes, [100, 100, 49]);
  const expected = IDS.filter((id) => id !== "ds-100").reverse();
  assert.deepEqual(seen, expected);
});

test("the default page is 50 and the last page's token is empty", async () => {
  const first = await page("");
  assert.equal(first.datasets.length, 50);
  assert.notEqual(first.nextPageToken, "");
  assert.equal(first.datasets[0].versions, undefined, "lists show the basic view");
  const all = await page("?pageSize=200");
  const rest = await page(`?pageSize=200&pageToken=${encodeURIComponent(all.nextPageToken)}`);
  assert.equal(rest.datasets.length, 49);
  assert.equal(rest.nextPageToken, "");
});

test("the filter narrows by state, in either spelling", async () => {
  // As people type it (`:` unencoded is allowed) and URL-encoded.
  for (const filter of [
    "state:READY",
    encodeURIComponent("state:DATASET_STATE_READY"),
    encodeURIComponent(" state : READY "),
  ]) {
    const body = await page(`?filter=${filter}`);
    assert.deepEqual(
      body.datasets.map((d: any) => d.datasetId),
      ["ds-200", "ds-010"],
      filter,
    );
    assert.equal(body.totalSize, 2);
    assert.equal(body.nextPageToken, "");
  }
  const deleted = await page(`?filter=${encodeURIComponent("state:DELETED")}`);
  assert.deepEqual(
    deleted.datasets.map((d: any) => d.datasetId),
    ["ds-100"],
  );
  const filtered = await page(`?filter=${encodeURIComponent("state:CREATING")}&pageSize=1`);
  assert.equal(filtered.totalSize, 247);
});

test("anything else in filter is 400 INVALID_REQUEST with param filter", async () => {
  for (const filter of ["state:RUNNING", "READY", "name:ds-001", "state:ready"]) {
    const r = await call(acme, "GET", `/datasets?filter=${encodeURIComponent(filter)}`);
    assertError(r, INVALID_REQUEST);
    assert.equal(r.body.error.param, "filter", filter);
  }
});

test("a page token reused with other parameters, or not issued by the list, is 400", async () => {
  const first = await page("?pageSize=10");
  for (const query of [
    `pageSize=20&pageToken=${first.nextPageToken}`,
    `pageSize=10&filter=${encodeURIComponent("state:CREATING")}&pageToken=${first.nextPageToken}`,
    "pageToken=garbage",
  ]) {
    const r = await call(acme, "GET", `/datasets?${query}`);
    assertError(r, INVALID_REQUEST);
    assert.equal(r.body.error.param, "pageToken", query);
  }
  for (const size of ["0", "201"]) assertError(await call(acme, "GET", `/datasets?pageSize=${size}`), INVALID_REQUEST);
});

test("a token from another account's list does not work here", async () => {
  const globex = target(server, "globex");
  for (let i = 0; i < 3; i++) await createDataset(globex, `g-${i}`);
  const theirs = await call(globex, "GET", "/datasets?pageSize=1");
  assertError(await call(acme, "GET", `/datasets?pageSize=1&pageToken=${theirs.body.nextPageToken}`), INVALID_REQUEST);
});
