/**
 * Calls of the dataset operations over real HTTP, rows to upload, and a bounded wait for
 * a dataset to reach a state (validation runs in the background).
 */
import assert from "node:assert/strict";
import { countTokens } from "../../server/inference/tokenizer.ts";
import { type Reply, request } from "../support/http.ts";

export interface Target {
  baseUrl: string;
  key: string;
  account: string;
}

export function target(server: { baseUrl: string; keys: Record<string, string> }, account = "acme"): Target {
  return { baseUrl: server.baseUrl, key: server.keys[account] as string, account };
}

export function call(
  t: Target,
  method: string,
  path: string,
  body?: { json?: unknown; raw?: BodyInit; type?: string; signal?: AbortSignal },
): Promise<Reply> {
  const headers: Record<string, string> = {};
  let payload: BodyInit | undefined;
  if (body?.json !== undefined) {
    headers["content-type"] = "application/json";
    payload = JSON.stringify(body.json);
  } else if (body?.raw !== undefined) {
    if (body.type) headers["content-type"] = body.type;
    payload = body.raw;
  }
  return request(`${t.baseUrl}/accounts/${t.account}${path}`, {
    method,
    key: t.key,
    headers,
    body: payload,
    signal: body?.signal,
  });
}

export async function createDataset(t: Target, datasetId: string, displayName?: string): Promise<any> {
  const r = await call(t, "POST", "/datasets", {
    json: { datasetId, dataset: displayName === undefined ? {} : { displayName } },
  });
  assert.equal(r.status, 200, r.text);
  return r.body;
}

export async function uploadJsonl(
  t: Target,
  datasetId: string,
  text: string,
  type = "application/jsonl",
): Promise<any> {
  const r = await call(t, "POST", `/datasets/${datasetId}:upload`, { raw: text, type });
  assert.equal(r.status, 200, r.text);
  return r.body;
}

export async function validate(t: Target, datasetId: string): Promise<any> {
  const r = await call(t, "POST", `/datasets/${datasetId}:validateUpload`, { json: {} });
  assert.equal(r.status, 200, r.text);
  return r.body;
}

export async function getDataset(t: Target, datasetId: string, view?: string): Promise<any> {
  const r = await call(t, "GET", `/datasets/${datasetId}${view ? `?view=${view}` : ""}`);
  assert.equal(r.status, 200, r.text);
  return r.body;
}

const SETTLED = new Set(["DATASET_STATE_READY", "DATASET_STATE_FAILED"]);

/**
 * Polls the dataset until validation has settled it (READY or FAILED), for at most `timeoutMs`.
 * The pause grows (25 ms, ×1.5, at most 500 ms) as a client's would: on a loaded machine a
 * validation takes seconds, and a fixed 25 ms poll spent the demo account's 600 requests a
 * minute, failing the next test with 429.
 */
export async function waitUntilSettled(t: Target, datasetId: string, timeoutMs = 20_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (let pause = 25; ; pause = Math.min(pause * 1.5, 500)) {
    const dataset = await getDataset(t, datasetId, "DATASET_VIEW_FULL");
    if (SETTLED.has(dataset.state)) return dataset;
    if (Date.now() > deadline) assert.fail(`${datasetId} is still ${dataset.state} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

/** Upload, validate and wait: the dataset as it settles. */
export async function uploadAndValidate(t: Target, datasetId: string, text: string): Promise<any> {
  await uploadJsonl(t, datasetId, text);
  await validate(t, datasetId);
  return waitUntilSettled(t, datasetId);
}

export const sftRow = (question: string, answer: string) => ({
  messages: [
    { role: "user", content: question },
    { role: "assistant", content: answer },
  ],
});

export const preferenceRow = (question: string, good: string, bad: string) => ({
  input: { messages: [{ role: "user", content: question }] },
  preferred_output: [{ role: "assistant", content: good }],
  non_preferred_output: [{ role: "assistant", content: bad }],
});

export function jsonl(rows: unknown[]): string {
  return rows.map((row) => (typeof row === "string" ? row : JSON.stringify(row))).join("\n") + "\n";
}

/** Tokens of rows as the service counts them: 3 per message plus its content's tokens. */
export function tokensOf(rows: { messages?: { content: string }[] }[]): number {
  return rows.reduce((sum, row) => sum + (row.messages ?? []).reduce((s, m) => s + 3 + countTokens(m.content), 0), 0);
}
