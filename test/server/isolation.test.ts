/**
 * Tenant isolation. For every operation of the contract whose path takes `{account}`, a
 * key of account A (acme), aimed at account B (globex):
 * - can read nothing: the answer is 403 OPERATION_NOT_ALLOWED;
 * - can change nothing: B's datasets, versions, jobs, models and balance are the same after
 *   every attempt (a cancellable job of B's stays QUEUED);
 * - learns nothing about what exists: the answer for B's real dataset, version and job is
 *   the same, byte for byte once names are blanked, as for ids B never used and for an
 *   account that does not exist.
 * And where A names B's things inside its own requests (a job on B's dataset version,
 * inference on B's fine-tuned model, the model list), A gets the answer for a name that
 * does not exist. The operations are read from the generated OpenAPI, so a new
 * `{account}` operation is covered without touching this file.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, test } from "vitest";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import { ahoyRows, call, createSftJob, readyDataset, type Caller } from "../finetune/fixtures.ts";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";

const OPENAPI = fileURLToPath(new URL("../../generated/openapi.3.1.yaml", import.meta.url));

interface Operation {
  method: string;
  path: string;
  operationId: string;
  contentTypes: string[];
}

const operations: Operation[] = Object.entries(
  (
    YAML.parse(readFileSync(OPENAPI, "utf8")) as {
      paths: Record<
        string,
        Record<string, { operationId?: string; requestBody?: { content: Record<string, unknown> } }>
      >;
    }
  ).paths,
)
  .flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([, op]) => typeof op === "object" && op?.operationId)
      .map(([method, op]) => ({
        method: method.toUpperCase(),
        path,
        operationId: op.operationId as string,
        contentTypes: Object.keys(op.requestBody?.content ?? {}),
      })),
  )
  .filter((op) => op.path.includes("{account}"));

let server: TestServer;
let globex: Caller;
let acme: Caller;
/** B's real things, and names of the same shape B never used. */
let real: { account: string; dataset: string; job: string; version: string };
const absent = { account: "nobody-at-all", dataset: "absent-data", job: "sftj-0000000000000000", version: "7" };
let queuedJob: string;

beforeAll(async () => {
  // No runner: B's second job stays QUEUED (cancellable) for the whole test.
  server = await startTestServer({ fineTuning: { runJobs: false } });
  globex = { server, account: "globex", key: server.keys.globex as string };
  acme = { server, account: "acme", key: server.keys.acme as string };
  const version = await readyDataset(globex, "secret-data", ahoyRows(12));
  // B's first job is made to succeed straight in the store (no runner here), with its model.
  const first = await createSftJob(globex, version, { outputModelId: "secret-model" });
  const claimed = await server.store.fineTuning.claimJob("test", new Date(), 60_000);
  assert.equal(claimed?.job.jobId, first.body.jobId);
  await server.store.fineTuning.completeJob(
    "globex",
    first.body.jobId,
    {
      accountId: "globex",
      modelId: "secret-model",
      baseModel: "accounts/maas/models/tiny-chat",
      jobName: first.body.name,
      adapterPath: "models/globex/secret-model.lora",
      createTime: new Date(),
    },
    {},
  );
  const second = await createSftJob(globex, version, { outputModelId: "secret-model-2" });
  queuedJob = second.body.jobId;
  real = { account: "globex", dataset: "secret-data", job: first.body.jobId, version: "1" };
});
afterAll(() => server?.close());

/** Everything of B's that a request could read or change, as B sees it. */
async function snapshotOfB(): Promise<unknown> {
  const get = async (path: string) => (await call(globex, "GET", path)).text;
  return {
    datasets: await get("/datasets"),
    dataset: await get(`/datasets/${real.dataset}?view=DATASET_VIEW_FULL`),
    version: await get(`/datasets/${real.dataset}/versions/1`),
    sft: await get("/supervisedFineTuningJobs"),
    dpo: await get("/dpoJobs"),
    metrics: await get(`/supervisedFineTuningJobs/${real.job}/metrics`),
    models: await fetch(`${server.baseUrl}/models`, { headers: { authorization: `Bearer ${globex.key}` } }).then((r) =>
      r.text(),
    ),
    balance: (await server.store.accounts.get("globex"))?.balanceMicros,
  };
}

/** A valid request of the operation for the given names (valid, so it is refused for who asks, not for what). */
function request(op: Operation, names: typeof absent): { url: string; init: RequestInit } {
  const path = op.path
    .replace("{account}", names.account)
    .replace("{dataset}", names.dataset)
    .replace("{job}", names.job)
    .replace("{version}", names.version);
  const headers: Record<string, string> = { authorization: `Bearer ${acme.key}` };
  let body: string | undefined;
  const inputDatasetVersion = `accounts/${names.account}/datasets/${names.dataset}/versions/${names.version}`;
  if (op.contentTypes.includes("application/jsonl")) {
    headers["content-type"] = "application/jsonl";
    body = `${JSON.stringify(ahoyRows(1)[0])}\n`;
  } else if (op.contentTypes.includes("application/json")) {
    headers["content-type"] = "application/json";
    const id = op.operationId;
    body = JSON.stringify(
      id === "createDataset"
        ? { datasetId: "intruder", dataset: {} }
        : /Job$|JobCost$/.test(id)
          ? { baseModel: "accounts/maas/models/tiny-chat", inputDatasetVersion, config: { outputModelId: "intruder" } }
          : {},
    );
    if (/create.*Job$/.test(id)) headers["idempotency-key"] = "intruder";
  }
  return { url: `${server.baseUrl}${path}`, init: { method: op.method, headers, body } };
}

/**
 * The answer with every name of B's (real or absent) blanked, and without per-request
 * headers. Connection and Keep-Alive are per request too: a refused request whose body has
 * not all arrived yet is answered with `connection: close` (error-handler.ts), which is a
 * matter of timing on the socket, not of anything of B's.
 */
function normalized(status: number, headers: Headers, text: string): string {
  let blanked = text;
  for (const names of [real, absent]) {
    for (const value of [names.dataset, names.job, names.account, `versions/${names.version}`])
      blanked = blanked.replaceAll(value, "<name>");
  }
  const kept = [...headers]
    .filter(([name]) => !["date", "x-request-id", "content-length", "etag", "connection", "keep-alive"].includes(name))
    .sort();
  return JSON.stringify({ status, headers: kept, body: blanked });
}

async function answer(
  op: Operation,
  names: typeof absent,
): Promise<{ status: number; code?: string; normalized: string }> {
  const { url, init } = request(op, names);
  const response = await fetch(url, init);
  const text = await response.text();
  return {
    status: response.status,
    code: (JSON.parse(text) as { error?: { code?: string } }).error?.code,
    normalized: normalized(response.status, response.headers, text),
  };
}

describe("a key of account A aimed at account B", () => {
  test("the contract has {account} operations to try, every one of them", () => {
    assert.ok(operations.length >= 19, `only ${operations.length} operations take {account}`);
  });

  for (const op of operations) {
    test(`${op.operationId}: 403 OPERATION_NOT_ALLOWED, the same whether B's thing exists or not, and B unchanged`, async () => {
      const beforeB = await snapshotOfB();
      const onReal = await answer(op, real);
      const onAbsentThing = await answer(op, { ...absent, account: real.account });
      const onAbsentAccount = await answer(op, absent);
      assert.equal(onReal.status, 403, onReal.normalized);
      assert.equal(onReal.code, "OPERATION_NOT_ALLOWED");
      assert.equal(
        onReal.normalized,
        onAbsentThing.normalized,
        "B's real thing answers differently from one B never had",
      );
      assert.equal(
        onReal.normalized,
        onAbsentAccount.normalized,
        "B answers differently from an account that does not exist",
      );
      assert.deepEqual(await snapshotOfB(), beforeB, "B's records changed");
    });
  }

  test("B's cancellable job is still QUEUED after every attempt", async () => {
    const job = await call(globex, "GET", `/supervisedFineTuningJobs/${queuedJob}`);
    assert.equal(job.body.state, "JOB_STATE_QUEUED");
    const cancel = await fetch(`${server.baseUrl}/accounts/globex/supervisedFineTuningJobs/${queuedJob}:cancel`, {
      method: "POST",
      headers: { authorization: `Bearer ${acme.key}` },
    });
    assert.equal(cancel.status, 403);
    assert.equal((await call(globex, "GET", `/supervisedFineTuningJobs/${queuedJob}`)).body.state, "JOB_STATE_QUEUED");
  });
});

describe("account A naming B's things in its own requests", () => {
  const blank = (text: string) =>
    text
      .replaceAll("secret-data", "<name>")
      .replaceAll("absent-data", "<name>")
      .replaceAll("secret-model", "<name>")
      .replaceAll("absent-model", "<name>");

  test("a job or estimate on B's dataset version: the answer for a dataset that does not exist", async () => {
    for (const path of [
      "/supervisedFineTuningJobs",
      "/supervisedFineTuningJobs:estimateCost",
      "/dpoJobs:estimateCost",
    ]) {
      const on = (dataset: string) =>
        call(acme, "POST", path, {
          baseModel: "accounts/maas/models/tiny-chat",
          inputDatasetVersion: `accounts/globex/datasets/${dataset}/versions/1`,
          config: { outputModelId: `probe-${dataset}` },
        });
      const [realOne, absentOne] = [await on("secret-data"), await on("absent-data")];
      assert.ok(realOne.status >= 400, `${path} accepted B's dataset: ${realOne.text}`);
      assert.equal(realOne.status, absentOne.status, path);
      assert.equal(blank(realOne.body.error.message), blank(absentOne.body.error.message), path);
      assert.equal(realOne.body.error.code, absentOne.body.error.code, path);
    }
  });

  test("inference on B's fine-tuned model, and the model itself: the answers for a model that does not exist", async () => {
    const headers = { authorization: `Bearer ${acme.key}`, "content-type": "application/json", "x-api-key": acme.key };
    const probes: [string, (model: string) => unknown][] = [
      ["/responses", (model) => ({ model, input: "Hello!", store: false })],
      ["/chat/completions", (model) => ({ model, messages: [{ role: "user", content: "Hello!" }] })],
      ["/completions", (model) => ({ model, prompt: "Hello!" })],
      ["/messages", (model) => ({ model, max_tokens: 8, messages: [{ role: "user", content: "Hello!" }] })],
    ];
    for (const kind of ["models", "deployments"]) {
      for (const [path, body] of probes) {
        const on = async (model: string) => {
          const response = await fetch(`${server.baseUrl}${path}`, {
            method: "POST",
            headers,
            body: JSON.stringify(body(`accounts/globex/${kind}/${model}`)),
          });
          return { status: response.status, text: blank(await response.text()) };
        };
        const [realOne, absentOne] = [await on("secret-model"), await on("absent-model")];
        assert.ok(realOne.status >= 400, `${path} served B's model`);
        assert.deepEqual(realOne, absentOne, `${path} with B's ${kind}`);
      }
      const get = async (model: string) => {
        const response = await fetch(
          `${server.baseUrl}/models/${encodeURIComponent(`accounts/globex/${kind}/${model}`)}`,
          { headers },
        );
        return { status: response.status, text: blank(await response.text()) };
      };
      assert.deepEqual(await get("secret-model"), await get("absent-model"));
    }
  });

  test("A's model list names none of B's models", async () => {
    const list = await fetch(`${server.baseUrl}/models`, { headers: { authorization: `Bearer ${acme.key}` } }).then(
      (r) => r.text(),
    );
    assert.doesNotMatch(list, /globex|secret-model/);
    const own = await fetch(`${server.baseUrl}/models`, { headers: { authorization: `Bearer ${globex.key}` } }).then(
      (r) => r.text(),
    );
    assert.match(own, /accounts\/globex\/models\/secret-model/, "B sees it: the check above can fail");
  });
});
