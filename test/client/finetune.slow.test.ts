/**
 * The client against the whole reference server for datasets and fine-tuning: every
 * operation through the client, uploads, waitForDataset, waitForJob until a job
 * succeeds, the idempotent job create (a retried create yields one job), and paging over
 * 250 items with the filter kept across pages.
 */
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, test } from "vitest";
import {
  ApiError,
  createClient,
  ok,
  pages,
  paginate,
  streamResponse,
  toJsonl,
  uploadDataset,
  waitForDataset,
  waitForJob,
  WaitTimeoutError,
  type ApiClient,
  type Dataset,
  type JobState,
  type RetryInfo,
  type TrainingJobRequest,
} from "../../client/index.ts";
import { ahoyPreferenceRows, ahoyRows } from "../finetune/fixtures.ts";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";

let server: TestServer;
let client: ApiClient;
/** Every Idempotency-Key the client sent, by path. */
const sentKeys: { path: string; key: string | null }[] = [];
const account = "acme";
let sftData: string;
let dpoData: string;

/** Creates, uploads, validates and waits: the dataset's READY version name. */
async function readyDataset(c: ApiClient, acct: string, datasetId: string, rows: unknown[]): Promise<string> {
  const created = await ok(
    c.POST("/accounts/{account}/datasets", {
      params: { path: { account: acct } },
      body: { datasetId, dataset: { displayName: datasetId } },
    }),
  );
  assert.equal(created.state, "DATASET_STATE_CREATING");
  const version = await uploadDataset(c, { account: acct, dataset: datasetId }, toJsonl(rows));
  await ok(
    c.POST("/accounts/{account}/datasets/{dataset}:validateUpload", {
      params: { path: { account: acct, dataset: datasetId } },
      body: {},
    }),
  );
  const ready = await waitForDataset(c, created, { intervalMs: 20, timeoutMs: 30_000 });
  assert.equal(ready.state, "DATASET_STATE_READY");
  return version.name;
}

beforeAll(async () => {
  server = await startTestServer({ fineTuning: { pollMs: 20 } });
  client = createClient({
    baseUrl: server.baseUrl,
    apiKey: server.keys.acme as string,
    fetch: (request) => {
      sentKeys.push({ path: new URL(request.url).pathname, key: request.headers.get("idempotency-key") });
      return fetch(request);
    },
  });
  sftData = await readyDataset(client, account, "ahoy", ahoyRows(24));
  dpoData = await readyDataset(client, account, "ahoy-pref", ahoyPreferenceRows(16));
});
afterAll(() => server.close());

const sftRequest = (outputModelId: string, config: Partial<TrainingJobRequest["config"]> = {}): TrainingJobRequest => ({
  baseModel: "accounts/maas/models/tiny-chat",
  inputDatasetVersion: sftData,
  config: { outputModelId, ...config },
});

describe("datasets", () => {
  test("create, upload (text, Blob and stream), validate, wait, read, list and delete", async () => {
    const path = { account, dataset: "several" };
    const created = await ok(
      client.POST("/accounts/{account}/datasets", {
        params: { path: { account } },
        body: { datasetId: "several", dataset: {} },
      }),
    );
    assert.equal(created.name, "accounts/acme/datasets/several");

    const v1 = await uploadDataset(client, path, toJsonl(ahoyRows(3)));
    const v2 = await uploadDataset(client, path, new Blob([toJsonl(ahoyRows(4))]));
    const bytes = new TextEncoder().encode(toJsonl(ahoyRows(5)));
    const v3 = await uploadDataset(
      client,
      path,
      new ReadableStream<Uint8Array>({ start: (c) => (c.enqueue(bytes), c.close()) }),
    );
    assert.deepEqual([v1.versionNo, v2.versionNo, v3.versionNo], [1, 2, 3]);
    assert.equal(v3.state, "DATASET_VERSION_STATE_UPLOADING");

    const validating = await ok(
      client.POST("/accounts/{account}/datasets/{dataset}:validateUpload", { params: { path }, body: {} }),
    );
    assert.equal(validating.state, "DATASET_STATE_VALIDATING");
    const states: string[] = [];
    const ready = await waitForDataset(
      client,
      { account, dataset: "several" },
      { intervalMs: 10, onProgress: (d) => states.push(d.state) },
    );
    assert.equal(ready.state, "DATASET_STATE_READY");
    assert.equal(states.at(-1), "DATASET_STATE_READY");

    const version = await ok(
      client.GET("/accounts/{account}/datasets/{dataset}/versions/{version}", {
        params: { path: { ...path, version: 3 } },
      }),
    );
    assert.equal(version.state, "DATASET_VERSION_STATE_READY");
    assert.equal(version.exampleCount, "5");
    assert.equal(version.format, "SFT");

    const full = await ok(
      client.GET("/accounts/{account}/datasets/{dataset}", { params: { path, query: { view: "DATASET_VIEW_FULL" } } }),
    );
    assert.equal(full.versions?.length, 3);

    const listed: Dataset[] = [];
    for await (const dataset of paginate(client, "/accounts/{account}/datasets", {
      params: { path: { account }, query: { filter: "state:READY" } },
    }))
      listed.push(dataset);
    assert.ok(listed.some((d) => d.datasetId === "several"));

    const deleted = await ok(client.DELETE("/accounts/{account}/datasets/{dataset}", { params: { path } }));
    assert.equal(deleted.state, "DATASET_STATE_DELETED");
  });

  test("errors of the dataset operations are ApiErrors", async () => {
    const exists = await ok(
      client.POST("/accounts/{account}/datasets", {
        params: { path: { account } },
        body: { datasetId: "ahoy", dataset: {} },
      }),
    ).catch((e: unknown) => e);
    assert.ok(exists instanceof ApiError);
    assert.equal(exists.status, 409);
    assert.equal(exists.code, "ALREADY_EXISTS");
    const foreign = await ok(
      client.GET("/accounts/{account}/datasets/{dataset}", {
        params: { path: { account: "globex", dataset: "ahoy" } },
      }),
    ).catch((e: unknown) => e);
    assert.ok(foreign instanceof ApiError);
    assert.equal(foreign.code, "OPERATION_NOT_ALLOWED");
    assert.equal(foreign.type, "permission_error");
  });

  test("waitForDataset times out with the last state seen", async () => {
    await ok(
      client.POST("/accounts/{account}/datasets", {
        params: { path: { account } },
        body: { datasetId: "never-uploaded", dataset: {} },
      }),
    );
    const error = await waitForDataset(
      client,
      { account, dataset: "never-uploaded" },
      { timeoutMs: 60, intervalMs: 20 },
    ).catch((e: unknown) => e);
    assert.ok(error instanceof WaitTimeoutError);
    assert.equal((error.last as Dataset).state, "DATASET_STATE_CREATING");
  });
});

describe("supervised fine-tuning", () => {
  test("estimate, create (with an Idempotency-Key of its own), wait until it succeeds, read its curve, call the model", async () => {
    const estimate = await ok(
      client.POST("/accounts/{account}/supervisedFineTuningJobs:estimateCost", {
        params: { path: { account } },
        body: sftRequest("ahoy-model"),
      }),
    );
    assert.equal(estimate.estimate.exampleCount, "24");
    assert.equal(estimate.egress.allowed, true);

    const created = await ok(
      client.POST("/accounts/{account}/supervisedFineTuningJobs", {
        params: { path: { account } },
        body: sftRequest("ahoy-model", { epochs: 2 }),
      }),
    );
    assert.equal(created.state, "JOB_STATE_QUEUED");
    const sent = sentKeys.filter((s) => s.path.endsWith("/supervisedFineTuningJobs")).at(-1);
    assert.match(
      sent?.key ?? "",
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      "a random UUID",
    );

    const seen: JobState[] = [];
    const percents: number[] = [];
    const done = await waitForJob(client, created, {
      intervalMs: 10,
      timeoutMs: 120_000,
      onProgress: (job) => {
        if (seen.at(-1) !== job.state) seen.push(job.state);
        percents.push(job.progress.percent);
      },
    });
    assert.equal(done.state, "JOB_STATE_SUCCEEDED", JSON.stringify(done));
    assert.equal(seen.at(-1), "JOB_STATE_SUCCEEDED");
    assert.ok(seen.length >= 2, `states seen: ${seen.join(", ")}`);
    assert.equal(percents.at(-1), 100);
    assert.equal(done.outputModel, "accounts/acme/models/ahoy-model");

    const read = await ok(
      client.GET("/accounts/{account}/supervisedFineTuningJobs/{job}", {
        params: { path: { account, job: created.jobId } },
      }),
    );
    assert.equal(read.state, "JOB_STATE_SUCCEEDED");
    const curve = await ok(
      client.GET("/accounts/{account}/supervisedFineTuningJobs/{job}/metrics", {
        params: { path: { account, job: created.jobId }, query: { maxPoints: 2 } },
      }),
    );
    assert.equal(curve.complete, true);
    assert.ok(curve.points.length <= 2 && curve.points.length > 0);

    // The model is served and listed; its full name is one encoded path segment.
    const model = await ok(
      client.GET("/models/{model}", { params: { path: { model: "accounts/acme/models/ahoy-model" } } }),
    );
    assert.equal(model.id, "accounts/acme/models/ahoy-model");
    const stream = await streamResponse(client, {
      model: "accounts/acme/models/ahoy-model",
      input: "Hello! Tell me about the sea.",
      store: false,
      temperature: 0,
      max_output_tokens: 8,
    });
    const answer = await stream.finalResponse();
    assert.equal(answer.model, "accounts/acme/models/ahoy-model");
    assert.ok(answer.usage.output_tokens > 0);
  });

  test("cancel a job, and cancelling again is 409 JOB_STATE_INVALID", async () => {
    const created = await ok(
      client.POST("/accounts/{account}/supervisedFineTuningJobs", {
        params: { path: { account } },
        body: sftRequest("to-cancel", { epochs: 50 }),
      }),
    );
    const cancelled = await ok(
      client.POST("/accounts/{account}/supervisedFineTuningJobs/{job}:cancel", {
        params: { path: { account, job: created.jobId } },
      }),
    );
    assert.equal(cancelled.state, "JOB_STATE_CANCELLED");
    const again = await ok(
      client.POST("/accounts/{account}/supervisedFineTuningJobs/{job}:cancel", {
        params: { path: { account, job: created.jobId } },
      }),
    ).catch((e: unknown) => e);
    assert.ok(again instanceof ApiError);
    assert.equal(again.status, 409);
    assert.equal(again.code, "JOB_STATE_INVALID");
    // A terminal state ends a wait for another state at once.
    const waited = await waitForJob(client, created, { until: ["JOB_STATE_RUNNING"], intervalMs: 10 });
    assert.equal(waited.state, "JOB_STATE_CANCELLED");
  });

  test("the same Idempotency-Key twice gives the first job again; a different body with it is 409", async () => {
    const key = crypto.randomUUID();
    const params = { path: { account }, header: { "Idempotency-Key": key } };
    const first = await ok(
      client.POST("/accounts/{account}/supervisedFineTuningJobs", { params, body: sftRequest("same-key") }),
    );
    const second = await ok(
      client.POST("/accounts/{account}/supervisedFineTuningJobs", { params, body: sftRequest("same-key") }),
    );
    assert.equal(second.name, first.name);
    assert.equal(sentKeys.filter((s) => s.key === key).length, 2, "the caller's key is sent, not replaced");
    const conflict = await ok(
      client.POST("/accounts/{account}/supervisedFineTuningJobs", { params, body: sftRequest("other-body") }),
    ).catch((e: unknown) => e);
    assert.ok(conflict instanceof ApiError);
    assert.equal(conflict.code, "IDEMPOTENCY_CONFLICT");
    await waitForJob(client, first, { intervalMs: 10 });
  });
});

describe("a retried create yields one job", () => {
  let proxy: http.Server;
  let creates: string[];
  beforeAll(async () => {
    creates = [];
    // Forwards every request to the server; the first job create's answer is dropped
    // after the server has made the job (the connection is reset instead).
    proxy = http.createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const target = new URL(req.url ?? "/", server.origin);
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(([k]) => !["host", "connection", "content-length"].includes(k)),
      ) as Record<string, string>;
      const answer = await fetch(target, {
        method: req.method,
        headers,
        body: chunks.length ? Buffer.concat(chunks) : undefined,
      });
      const body = Buffer.from(await answer.arrayBuffer());
      const isCreate = req.method === "POST" && /\/(supervisedFineTuningJobs|dpoJobs)$/.test(target.pathname);
      if (isCreate) creates.push(String(req.headers["idempotency-key"]));
      if (isCreate && creates.length === 1) return req.socket.destroy();
      res.writeHead(answer.status, Object.fromEntries(answer.headers));
      res.end(body);
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  });
  afterAll(() => new Promise<void>((resolve) => proxy.close(() => resolve())));

  const cases = {
    supervisedFineTuningJobs: (c: ApiClient) =>
      ok(
        c.POST("/accounts/{account}/supervisedFineTuningJobs", {
          params: { path: { account } },
          body: sftRequest("retried-sft"),
        }),
      ),
    dpoJobs: (c: ApiClient) =>
      ok(
        c.POST("/accounts/{account}/dpoJobs", {
          params: { path: { account } },
          body: {
            baseModel: "accounts/maas/models/tiny-chat",
            inputDatasetVersion: dpoData,
            config: { outputModelId: "retried-dpo" },
          },
        }),
      ),
  };
  for (const [collection, create] of Object.entries(cases)) {
    test(`${collection}: the answer is lost, the client retries with the same key, and there is one job`, async () => {
      creates.length = 0;
      const retries: RetryInfo[] = [];
      const viaProxy = createClient({
        baseUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/v1`,
        apiKey: server.keys.acme as string,
        retry: { initialDelayMs: 20, onRetry: (r) => retries.push(r) },
      });
      const job = await create(viaProxy);
      assert.equal(retries.length, 1, "one retry, after the reset");
      assert.equal(creates.length, 2);
      assert.equal(creates[0], creates[1], "both attempts carried the same Idempotency-Key");
      const outputModelId = job.config.outputModelId;
      const same: string[] = [];
      const list = `/accounts/{account}/${collection as keyof typeof cases}` as const;
      for await (const listed of paginate(client, list, { params: { path: { account } } }))
        if (listed.config.outputModelId === outputModelId) same.push(listed.name);
      assert.deepEqual(same, [job.name], "exactly one job was created");
      await waitForJob(client, job, { intervalMs: 10 });
    });
  }
});

describe("DPO", () => {
  test("estimate, create, wait until it succeeds, metrics, list", async () => {
    const body: TrainingJobRequest = {
      baseModel: "accounts/maas/models/tiny-chat",
      inputDatasetVersion: dpoData,
      config: { outputModelId: "ahoy-dpo", dpoBeta: "0.2" },
    };
    const estimate = await ok(
      client.POST("/accounts/{account}/dpoJobs:estimateCost", { params: { path: { account } }, body }),
    );
    assert.equal(estimate.estimate.exampleCount, "16");
    const created = await ok(client.POST("/accounts/{account}/dpoJobs", { params: { path: { account } }, body }));
    assert.equal(created.jobType, "JOB_TYPE_DPO");
    assert.ok(
      sentKeys.some((s) => s.path.endsWith("/dpoJobs") && s.key),
      "DPO creates get a key too",
    );
    const done = await waitForJob(
      client,
      { account, jobId: created.jobId, jobType: "JOB_TYPE_DPO" },
      { intervalMs: 10, timeoutMs: 120_000 },
    );
    assert.equal(done.state, "JOB_STATE_SUCCEEDED", JSON.stringify(done));
    assert.equal(done.config.dpoBeta, "0.2");
    const curve = await ok(
      client.GET("/accounts/{account}/dpoJobs/{job}/metrics", { params: { path: { account, job: created.jobId } } }),
    );
    assert.equal(curve.complete, true);
    const read = await ok(
      client.GET("/accounts/{account}/dpoJobs/{job}", { params: { path: { account, job: created.jobId } } }),
    );
    assert.equal(read.name, created.name);
    const cancelDone = await ok(
      client.POST("/accounts/{account}/dpoJobs/{job}:cancel", { params: { path: { account, job: created.jobId } } }),
    ).catch((e: unknown) => e);
    assert.ok(cancelDone instanceof ApiError && cancelDone.code === "JOB_STATE_INVALID");
  });
});

describe("paging", () => {
  test("250 datasets over pages of 100, with the filter kept on every page", async () => {
    const globex = createClient({ baseUrl: server.baseUrl, apiKey: server.keys.globex as string });
    const path = { account: "globex" };
    for (let i = 0; i <= 250; i++)
      await ok(
        globex.POST("/accounts/{account}/datasets", { params: { path }, body: { datasetId: `set-${i}`, dataset: {} } }),
      );
    // One of the 251 moves on to UPLOADING, so the filter has something to leave out.
    await uploadDataset(globex, { account: "globex", dataset: "set-0" }, toJsonl(ahoyRows(1)));

    const init = { params: { path, query: { pageSize: 100, filter: "state:CREATING" } } };
    const sizes: number[] = [];
    for await (const page of pages(globex, "/accounts/{account}/datasets", init)) {
      sizes.push(page.datasets.length);
      assert.equal(page.totalSize, 250);
    }
    assert.deepEqual(sizes, [100, 100, 50]);

    const names: string[] = [];
    for await (const dataset of paginate(globex, "/accounts/{account}/datasets", init)) {
      assert.equal(dataset.state, "DATASET_STATE_CREATING");
      names.push(dataset.datasetId);
    }
    assert.equal(names.length, 250);
    assert.equal(new Set(names).size, 250, "no item twice");
    assert.ok(!names.includes("set-0"));

    let all = 0;
    for await (const _ of paginate(globex, "/accounts/{account}/datasets", {
      params: { path, query: { pageSize: 200 } },
    }))
      all++;
    assert.equal(all, 251);
  });

  test("job lists page too (SFT and DPO), and stopping early fetches no more pages", async () => {
    const seen: string[] = [];
    for await (const job of paginate(client, "/accounts/{account}/supervisedFineTuningJobs", {
      params: { path: { account }, query: { pageSize: 1 } },
    }))
      seen.push(job.jobId);
    assert.ok(seen.length >= 3);
    assert.equal(new Set(seen).size, seen.length);
    const dpo: string[] = [];
    for await (const job of paginate(client, "/accounts/{account}/dpoJobs", {
      params: { path: { account }, query: { pageSize: 1, filter: "state:SUCCEEDED" } },
    }))
      dpo.push(job.state);
    assert.ok(dpo.length >= 1 && dpo.every((s) => s === "JOB_STATE_SUCCEEDED"));

    const before = sentKeys.length;
    for await (const _ of paginate(client, "/accounts/{account}/supervisedFineTuningJobs", {
      params: { path: { account }, query: { pageSize: 1 } },
    }))
      break;
    assert.equal(sentKeys.length - before, 1, "one page fetched");
  });
});
