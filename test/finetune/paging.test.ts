/**
 * Paging through 250 jobs with pageSize=100, newest first, each exactly once, on a server
 * that does not run jobs (so the list stays as created).
 */
import assert from "node:assert/strict";
import { afterAll, beforeAll, test } from "vitest";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";
import { assertError, INVALID_REQUEST } from "../support/http.ts";
import { ahoyRows, call, createSftJob, readyDataset, type Caller } from "./fixtures.ts";

let server: TestServer;
let acme: Caller;
const created: string[] = [];

beforeAll(async () => {
  server = await startTestServer({ fineTuning: { runJobs: false } });
  acme = { server, account: "acme", key: server.keys.acme as string };
  const data = await readyDataset(acme, "small", ahoyRows(4));
  for (let i = 0; i < 250; i++) {
    const result = await createSftJob(acme, data, { outputModelId: `m-${i}` });
    created.push(result.body.name);
  }
});
afterAll(() => server.close());

test("250 jobs in pages of 100: 100, 100, 50, newest first, each exactly once", async () => {
  const seen: string[] = [];
  const sizes: number[] = [];
  let token = "";
  do {
    const page = await call(acme, "GET", `/supervisedFineTuningJobs?pageSize=100${token ? `&pageToken=${token}` : ""}`);
    assert.equal(page.status, 200, page.text);
    assert.equal(page.body.totalSize, 250);
    sizes.push(page.body.supervisedFineTuningJobs.length);
    seen.push(...page.body.supervisedFineTuningJobs.map((j: any) => j.name));
    token = page.body.nextPageToken;
  } while (token !== "");
  assert.deepEqual(sizes, [100, 100, 50]);
  assert.deepEqual(seen, [...created].reverse());
});

test("a page token used with other parameters, or a forged one, is 400", async () => {
  const first = await call(acme, "GET", "/supervisedFineTuningJobs?pageSize=100");
  const token = first.body.nextPageToken;
  const other = await call(acme, "GET", `/supervisedFineTuningJobs?pageSize=50&pageToken=${token}`);
  assertError(other, INVALID_REQUEST);
  assert.equal(other.body.error.param, "pageToken");
  assertError(await call(acme, "GET", "/supervisedFineTuningJobs?pageToken=forged"), INVALID_REQUEST);
  assertError(await call(acme, "GET", "/supervisedFineTuningJobs?pageSize=201"), INVALID_REQUEST);
});

test("the other collection is empty", async () => {
  const dpo = await call(acme, "GET", "/dpoJobs");
  assert.deepEqual(dpo.body, { dpoJobs: [], nextPageToken: "", totalSize: 0 });
});
