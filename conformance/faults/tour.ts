/**
 * A scripted tour of the API through a proxy: the requests a conformance run makes, in
 * small, without checking anything. It shows that each fault of the catalogue really
 * fires on the wire (the proxy counts its hits), independently of the kit: a fault that
 * never fires on the tour cannot be blamed on the kit. The fault test runs it once per
 * fault; `prepareTour` makes the datasets and jobs it reads, directly on the server.
 */
import { randomBytes } from "node:crypto";
import { jsonOrUndefined } from "../http.ts";
import { isPlainObject } from "../matchers.ts";

export interface TourAccounts {
  /** Keys by role, as the seed's accounts play them. */
  primary: { id: string; key: string };
  secondary: { id: string; key: string };
  suspended: { id: string; key: string };
  zeroBalance: { id: string; key: string };
  budgetExhausted: { id: string; key: string };
  rateLimited: { id: string; key: string };
}

export interface TourFixtures {
  /** A READY SFT dataset of the primary account: its name and latest version. */
  dataset: string;
  datasetVersion: string;
  /** A FAILED dataset id of the primary account. */
  failedDataset: string;
  /** A SUCCEEDED SFT job id of the primary account (with a curve of several points). */
  succeededJob: string;
  /** The chat model, the reasoning model, the trainable base (its full resource name, as baseModel takes it). */
  chat: string;
  reasoning: string;
  base: string;
  /** A term the routing blocks in output that the chat model writes at temperature 0 for `blockedPrompt`. */
  blockedPrompt?: string;
}

type Init = {
  method?: string;
  key?: string;
  headers?: Record<string, string>;
  json?: unknown;
  body?: string;
  query?: Record<string, string>;
};

function client(baseUrl: string, defaultKey: string) {
  return async (path: string, init: Init = {}) => {
    const headers: Record<string, string> = { ...init.headers };
    const key = init.key ?? defaultKey;
    if (key !== "" && headers["x-api-key"] === undefined) headers.authorization = `Bearer ${key}`;
    let body: string | undefined = init.body;
    if (init.json !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(init.json);
    }
    const query = init.query ? `?${new URLSearchParams(init.query)}` : "";
    const response = await fetch(baseUrl + path + query, {
      method: init.method ?? (body === undefined ? "GET" : "POST"),
      headers,
      body,
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, text, json: jsonOrUndefined(text) };
  };
}

/** A string field of a JSON object answer; undefined when the answer is not an object or the field not a string. */
function stringField(json: unknown, name: string): string | undefined {
  const value = isPlainObject(json) ? json[name] : undefined;
  return typeof value === "string" ? value : undefined;
}

/** The items of a list field of a JSON object answer (a page of jobs, of datasets); empty when there are none. */
function listField(json: unknown, name: string): unknown[] {
  const value = isPlainObject(json) ? json[name] : undefined;
  return Array.isArray(value) ? value : [];
}

/** Makes the tour's datasets and jobs directly on the server (not through a proxy). */
export async function prepareTour(
  baseUrl: string,
  accounts: TourAccounts,
  models: { chat: string; reasoning: string; base: string },
): Promise<TourFixtures> {
  const call = client(baseUrl, accounts.primary.key);
  const a = `/accounts/${accounts.primary.id}`;
  const rows = Array.from({ length: 40 }, (_, i) =>
    JSON.stringify({
      messages: [
        { role: "user", content: `Question ${i}?` },
        { role: "assistant", content: `Answer ${i}.` },
      ],
    }),
  ).join("\n");
  const dataset = `tour-${randomBytes(3).toString("hex")}`;
  await call(`${a}/datasets`, { json: { datasetId: dataset, dataset: {} } });
  const upload = await call(`${a}/datasets/${dataset}:upload`, {
    body: rows,
    headers: { "content-type": "application/jsonl" },
  });
  await call(`${a}/datasets/${dataset}:validateUpload`, { json: {} });
  const failed = `${dataset}-bad`;
  await call(`${a}/datasets`, { json: { datasetId: failed, dataset: {} } });
  await call(`${a}/datasets/${failed}:upload`, {
    body: `${rows}\n{"messages": []}\n`,
    headers: { "content-type": "application/jsonl" },
  });
  await call(`${a}/datasets/${failed}:validateUpload`, { json: {} });
  await waitFor(
    async () =>
      stringField((await call(`${a}/datasets/${dataset}`)).json, "state") === "DATASET_STATE_READY" &&
      stringField((await call(`${a}/datasets/${failed}`)).json, "state") === "DATASET_STATE_FAILED",
  );
  const created = await call(`${a}/supervisedFineTuningJobs`, {
    json: {
      baseModel: models.base,
      inputDatasetVersion: `accounts/${accounts.primary.id}/datasets/${dataset}`,
      config: { outputModelId: `${dataset}-model`, epochs: 2, batchSize: 4 },
    },
  });
  const job = stringField(created.json, "jobId");
  if (created.status !== 201 || job === undefined) throw new Error(`tour job: ${created.text}`);
  const datasetVersion = stringField(upload.json, "name");
  if (datasetVersion === undefined) throw new Error(`tour upload: ${upload.text}`);
  await waitFor(
    async () =>
      stringField((await call(`${a}/supervisedFineTuningJobs/${job}`)).json, "state") === "JOB_STATE_SUCCEEDED",
    120_000,
  );
  return { dataset, datasetVersion, failedDataset: failed, succeededJob: job, ...models };
}

async function waitFor(check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("tour: gave up waiting");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The tour: every kind of request the catalogue's faults act on. */
export async function runTour(
  baseUrl: string,
  origin: string,
  accounts: TourAccounts,
  fixtures: TourFixtures,
): Promise<void> {
  const call = client(baseUrl, accounts.primary.key);
  const a = `/accounts/${accounts.primary.id}`;
  const resp = (extra: Record<string, unknown> = {}, init: Init = {}) =>
    call("/responses", {
      ...init,
      json: { model: fixtures.chat, input: "Hello!", store: false, max_output_tokens: 24, temperature: 0, ...extra },
    });
  const weather = {
    type: "function",
    name: "get_weather",
    description: "Weather.",
    parameters: { type: "object", properties: { city: { type: "string" } } },
  };

  // POST /responses, plain and streamed.
  await resp({ max_output_tokens: 3 });
  await resp({ instructions: "Answer in one short sentence.", tools: [{ type: "web_search_preview" }, weather] });
  await resp({ stream: true, input: "Tell me about the weather." });
  await resp({ stream: true, instructions: "Be brief.", max_output_tokens: 30 });
  await resp({ stream: true, max_output_tokens: 3 });
  if (fixtures.blockedPrompt) await resp({ stream: true, input: fixtures.blockedPrompt, max_output_tokens: 40 });
  await resp({ store: true });
  await resp({ store: undefined });
  await resp({ previous_response_id: "resp_123" });
  await resp({ some_future_option: { enabled: true } });
  await resp({
    input: [
      { type: "message", role: "user", content: "Weather in Paris?" },
      { type: "function_call", call_id: "c1", name: "get_weather", arguments: "{}" },
      { type: "function_call_output", call_id: "c1", output: "{}" },
    ],
    tools: [weather],
  });
  await resp({ temperature: 2 });
  await resp({ temperature: 2.5 });
  await resp({ max_output_tokens: 0 });
  await resp({ model: fixtures.reasoning, reasoning: { effort: "minimal" } });
  await resp({ model: "no-such-model" });
  await resp({}, { key: "", headers: { "x-api-key": accounts.primary.key } });
  await resp({}, { key: "sk-not-a-key" });
  await resp({}, { key: accounts.suspended.key });
  await resp({}, { key: accounts.zeroBalance.key });
  await resp({}, { key: accounts.budgetExhausted.key });
  for (let i = 0; i < 3; i++) await resp({}, { key: accounts.rateLimited.key });
  await call("/responses/resp_123");

  // The other inference endpoints.
  await call("/chat/completions", {
    json: { model: fixtures.chat, messages: [{ role: "user", content: "Hi" }], max_tokens: 5, stream: true },
  });
  await call("/completions", { json: { model: fixtures.chat, prompt: "Hi", max_tokens: 5 } });
  await fetch(`${origin}/v1/messages`, {
    method: "POST",
    headers: { "x-api-key": accounts.primary.key, "content-type": "application/json" },
    body: JSON.stringify({ model: fixtures.chat, max_tokens: 5, messages: [{ role: "user", content: "Hi" }] }),
  }).then((r) => r.text());
  await call("/models");
  await call("/models/no-such-model");

  // Accounts.
  await call(`/accounts/${accounts.secondary.id}/datasets/${fixtures.dataset}`);
  await call(`/accounts/${accounts.secondary.id}/supervisedFineTuningJobs/${fixtures.succeededJob}`, {
    key: accounts.secondary.key,
  });
  await call(`${a}/datasets/${"x".repeat(65)}`);

  // Datasets.
  const fresh = `tour-${randomBytes(4).toString("hex")}`;
  await call(`${a}/datasets`, { json: { datasetId: fresh, dataset: {} } });
  await call(`${a}/datasets`, { json: { datasetId: fresh, dataset: {} } });
  await call(`${a}/datasets/${fixtures.dataset}`);
  await call(`${a}/datasets/${fixtures.dataset}`, { query: { view: "DATASET_VIEW_FULL" } });
  await call(`${a}/datasets/${fixtures.failedDataset}`, { query: { view: "DATASET_VIEW_FULL" } });
  await call(`${a}/datasets/${fixtures.failedDataset}/versions/1`);
  await call(`${a}/datasets/${fixtures.dataset}/versions/1`);
  const pageToken = stringField((await call(`${a}/datasets`, { query: { pageSize: "1" } })).json, "nextPageToken");
  if (pageToken) await call(`${a}/datasets`, { query: { pageSize: "1", pageToken } });
  await call(`${a}/datasets`, { query: { filter: "state:READY" } });
  await call(`${a}/datasets`, { query: { filter: "colour:blue" } });
  await call(`${a}/datasets`, { query: { pageSize: "201" } });
  await call(`${a}/datasets/${fresh}`, { method: "DELETE" });
  await call(`${a}/datasets/${fresh}`);

  // Jobs.
  const sft = `${a}/supervisedFineTuningJobs`;
  const job = fixtures.succeededJob;
  await call(`${sft}/${job}`);
  await call(`${a}/dpoJobs/${job}`);
  await call(`${sft}/${job}:cancel`, { method: "POST" });
  await call(`${sft}/${job}/metrics`, { query: { maxPoints: "2" } });
  await call(`${sft}/${job}/metrics`, { query: { maxPoints: "10001" } });
  await call(sft, { query: { pageSize: "1" } });
  const jobsPageToken = stringField((await call(sft, { query: { pageSize: "1" } })).json, "nextPageToken");
  if (jobsPageToken) await call(sft, { query: { pageSize: "1", pageToken: jobsPageToken } });
  await call(sft, { query: { filter: "state:SUCCEEDED" } });
  await call(sft, { query: { filter: "bogus" } });
  await call(sft, { query: { pageSize: "201" } });
  const input = `accounts/${accounts.primary.id}/datasets/${fixtures.dataset}`;
  const body = (extra: Record<string, unknown> = {}) => ({
    baseModel: fixtures.base,
    inputDatasetVersion: input,
    config: { outputModelId: `tour-${randomBytes(4).toString("hex")}`, ...extra },
  });
  await call(`${sft}:estimateCost`, { json: body({ epochs: 3 }) });
  await call(`${sft}:estimateCost`, { json: body({ dpoBeta: "0.2" }) });
  await call(`${sft}:estimateCost`, { json: body({ epochs: 101 }) });
  await call(`${sft}:estimateCost`, { json: body({ evalAutoCarveoutBasisPoints: 10000 }) });
  const key = `tour-${randomBytes(6).toString("hex")}`;
  const once = body();
  const first = await call(sft, { json: once, headers: { "idempotency-key": key } });
  await call(sft, { json: once, headers: { "idempotency-key": key } });
  await call(sft, { json: body(), headers: { "idempotency-key": key } });
  await call(sft, { json: body(), headers: { "idempotency-key": "k".repeat(256) } });
  const firstJob = stringField(first.json, "jobId");
  if (firstJob) {
    await call(`${sft}/${firstJob}:cancel`, { method: "POST" });
    await call(`${sft}/${firstJob}`);
  }
  // Cancel whatever the tour started, so the runner is free for the next tour.
  const queued = await client(baseUrl, accounts.primary.key)(sft, {
    query: { filter: "state:QUEUED", pageSize: "200" },
  });
  for (const j of listField(queued.json, "supervisedFineTuningJobs"))
    await call(`${sft}/${stringField(j, "jobId")}:cancel`, { method: "POST" });
}

/** A recipe of the profile: a model and input that make the misbehaving upstream fail one way. */
export interface TourRecipe {
  model: string;
  input: string;
  headers: Record<string, string>;
}

/** The tour of the server routed to a misbehaving upstream: each recipe plain and streamed, and through chat completions. */
export async function runUpstreamTour(
  baseUrl: string,
  key: string,
  recipes: Record<string, TourRecipe>,
): Promise<void> {
  const call = client(baseUrl, key);
  for (const recipe of Object.values(recipes)) {
    const body = { model: recipe.model, input: recipe.input, store: false, max_output_tokens: 16 };
    // A short deadline, so that a recipe for an endless answer ends too.
    const headers = { "x-request-timeout-ms": "1500", ...recipe.headers };
    await call("/responses", { json: body, headers });
    await call("/responses", { json: { ...body, stream: true }, headers });
    await call("/chat/completions", {
      json: { model: recipe.model, messages: [{ role: "user", content: recipe.input }], max_tokens: 16 },
      headers,
    });
  }
}
