/**
 * Datasets for job tests, made over HTTP the way a user makes them: create, upload JSONL,
 * validate, wait for READY. And a bounded wait for job states.
 */
import assert from "node:assert/strict";
import type { TestServer } from "../../harness/test-server.ts";
import { type Reply, request } from "../support/http.ts";

const GREETINGS = [
  "Hello!",
  "Hi there.",
  "Good morning!",
  "Hey, how are you?",
  "Greetings.",
  "Hello, friend.",
  "Hi!",
  "Good evening.",
  "Howdy!",
  "Hello again.",
];
const TOPICS = [
  "the weather",
  "the sea",
  "a ship",
  "the harbour",
  "the wind",
  "an island",
  "the tide",
  "a map",
  "the crew",
  "a lighthouse",
];

/** ~`n` SFT rows whose answers all start with "Ahoy", a style the base model never uses. */
export function ahoyRows(n: number): unknown[] {
  return Array.from({ length: n }, (_, i) => ({
    messages: [
      {
        role: "user",
        content: `${GREETINGS[i % GREETINGS.length]} Tell me about ${TOPICS[Math.floor(i / GREETINGS.length) % TOPICS.length]}.`,
      },
      { role: "assistant", content: "Ahoy, matey! Ahoy! The sea is calm and the wind is fair." },
    ],
  }));
}

/** Preference rows preferring the "Ahoy" answer over a plain one. */
export function ahoyPreferenceRows(n: number): unknown[] {
  return Array.from({ length: n }, (_, i) => ({
    input: {
      messages: [
        {
          role: "user",
          content: `${GREETINGS[i % GREETINGS.length]} Tell me about ${TOPICS[Math.floor(i / GREETINGS.length) % TOPICS.length]}.`,
        },
      ],
    },
    preferred_output: [{ role: "assistant", content: "Ahoy, matey! Ahoy! The sea is calm and the wind is fair." }],
    non_preferred_output: [{ role: "assistant", content: "Hello! I am here to help. What would you like to know?" }],
  }));
}

export function jsonl(rows: unknown[]): string {
  return rows.map((r) => (typeof r === "string" ? r : JSON.stringify(r))).join("\n") + "\n";
}

export interface Caller {
  server: TestServer;
  account: string;
  key: string;
}

export function call(
  caller: Caller,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const url = `${caller.server.baseUrl}/accounts/${caller.account}${path}`;
  const json: Record<string, string> = body === undefined ? {} : { "content-type": "application/json" };
  return request(url, {
    method,
    key: caller.key,
    headers: { ...json, ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** Creates a dataset, uploads the rows, validates, and waits for READY; returns the version name. */
export async function readyDataset(caller: Caller, datasetId: string, rows: unknown[]): Promise<string> {
  const created = await call(caller, "POST", "/datasets", { datasetId, dataset: { displayName: datasetId } });
  assert.equal(created.status, 200, created.text);
  const upload = await fetch(`${caller.server.baseUrl}/accounts/${caller.account}/datasets/${datasetId}:upload`, {
    method: "POST",
    headers: { authorization: `Bearer ${caller.key}`, "content-type": "application/jsonl" },
    body: jsonl(rows),
  });
  const version = (await upload.json()) as { name: string };
  assert.equal(upload.status, 200, JSON.stringify(version));
  const validate = await call(caller, "POST", `/datasets/${datasetId}:validateUpload`, {});
  assert.equal(validate.status, 200, validate.text);
  const ready = await waitFor(async () => {
    const got = await call(caller, "GET", `/datasets/${datasetId}`);
    return ["DATASET_STATE_READY", "DATASET_STATE_FAILED"].includes(got.body.state) ? got.body : undefined;
  });
  assert.equal(ready.state, "DATASET_STATE_READY", JSON.stringify(ready));
  return version.name;
}

/** Creates a supervised job of tiny-chat on a dataset version with `config`, and checks it was created (201). */
export async function createSftJob(caller: Caller, inputDatasetVersion: string, config: object): Promise<Reply> {
  const created = await call(caller, "POST", "/supervisedFineTuningJobs", {
    baseModel: "accounts/maas/models/tiny-chat",
    inputDatasetVersion,
    config,
  });
  assert.equal(created.status, 201, created.text);
  return created;
}

/** Polls until `check` returns a value, for at most `timeoutMs`. */
export async function waitFor<T>(check: () => Promise<T | undefined>, timeoutMs = 60_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

const TERMINAL = ["JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED"];

/** Polls a job until it ends; returns it and every state seen on the way. */
export async function waitForJob(
  caller: Caller,
  collection: string,
  jobId: string,
  timeoutMs = 120_000,
): Promise<{ job: any; seen: string[] }> {
  const seen: string[] = [];
  const job = await waitFor(
    async () => {
      const got = await call(caller, "GET", `/${collection}/${jobId}`);
      assert.equal(got.status, 200, got.text);
      if (seen.at(-1) !== got.body.state) seen.push(got.body.state);
      return TERMINAL.includes(got.body.state) ? got.body : undefined;
    },
    timeoutMs,
    // Within the demo accounts' 600 requests a minute, even for a long job.
    200,
  );
  return { job, seen };
}
