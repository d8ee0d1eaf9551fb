/**
 * The fuzzer's own resources in the profile's primary account, made and removed over the
 * API as any client would: READY datasets to name, scratch datasets to delete, a queued job
 * of each kind. Everything it makes carries its run's prefix (`fz-<run>-…`), and the
 * cleanup removes only what carries that prefix, so it never touches what others made:
 * jobs are cancelled, datasets deleted (models a job trained stay: the interface cannot
 * delete a model). Calls honour Retry-After of a rate limit, within a budget.
 */
import type { Profile } from "../profile.ts";
import { parseJson, type Json } from "./json.ts";
import type { FuzzFixtures } from "./requests.ts";

/** A client of one account that waits out the service's rate limit (within `budget`). */
export class AccountClient {
  readonly profile: Profile;
  readonly account: string;
  readonly key: string;
  /** Milliseconds of Retry-After still to be honoured in this run. */
  budget: { ms: number };

  constructor(profile: Profile, budget: { ms: number }) {
    this.profile = profile;
    this.account = profile.accounts.primary.id;
    this.key = profile.accounts.primary.key;
    this.budget = budget;
  }

  /** One JSON (or raw) call under the account's path or the base URL; answers are parsed JSON when they are. */
  async call(
    method: string,
    path: string,
    body?: unknown,
    raw?: { contentType: string; data: string },
  ): Promise<{ status: number; body: Json; text: string }> {
    for (let attempt = 0; ; attempt++) {
      const response = await fetch(`${this.profile.baseUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.key}`,
          ...(body !== undefined ? { "content-type": "application/json" } : {}),
          ...(raw ? { "content-type": raw.contentType } : {}),
        },
        body: body !== undefined ? JSON.stringify(body) : raw?.data,
        signal: AbortSignal.timeout(this.profile.timeouts.requestMs),
      });
      const text = await response.text();
      const parsed = parseJson(text);
      const wait = retryAfterMs(response.status, response.headers.get("retry-after"));
      if (wait !== undefined && attempt < 3 && wait <= this.budget.ms) {
        this.budget.ms -= wait;
        await new Promise((resolve) => setTimeout(resolve, wait));
        continue;
      }
      return { status: response.status, body: parsed, text };
    }
  }

  accountPath(rest: string): string {
    return `/accounts/${this.account}${rest}`;
  }
}

/** How long a 429 or 503 asks to wait, in ms; undefined for any other answer. */
export function retryAfterMs(status: number, header: string | null): number | undefined {
  if (status !== 429 && status !== 503) return undefined;
  const seconds = Number(header ?? "1");
  return Number.isFinite(seconds) && seconds >= 0 ? Math.max(seconds, 1) * 1000 : 1000;
}

const SFT_ROW = (i: number) => ({
  messages: [
    { role: "user", content: `Hello ${i}. Tell me about the sea.` },
    { role: "assistant", content: "Ahoy, matey! The sea is calm and the wind is fair." },
  ],
});
const DPO_ROW = (i: number) => ({
  input: { messages: [{ role: "user", content: `Hello ${i}. Tell me about the sea.` }] },
  preferred_output: [{ role: "assistant", content: "Ahoy, matey! The sea is calm and the wind is fair." }],
  non_preferred_output: [{ role: "assistant", content: "The sea is water." }],
});
/** About 200k tokens in one row: estimates and jobs must count it as skipped, not fail (a 500 once). */
const MEGABYTE_ROW = {
  messages: [
    { role: "user", content: "word ".repeat(200_000) },
    { role: "assistant", content: "Ahoy." },
  ],
};

/** What the run made, for its cleanup. */
export interface Made {
  datasets: Set<string>;
  /** `collection/jobId`. */
  jobs: Set<string>;
}

export interface FixtureNeeds {
  datasets: boolean;
  sft: boolean;
  dpo: boolean;
}

/** Makes the fixtures the operations to fuzz need; throws naming the call that failed. */
export async function makeFixtures(
  client: AccountClient,
  idPrefix: string,
  needs: FixtureNeeds,
  made: Made,
): Promise<FuzzFixtures> {
  const { profile } = client;
  const baseUrl = new URL(profile.baseUrl);
  const other = profile.accounts.secondary;
  const models = [
    ...new Set([profile.models.chat, profile.models.reasoning, profile.models.agreementRequired].filter(Boolean)),
  ] as string[];
  const base = profile.models.trainableBase ?? profile.models.chat;
  const fixtures: FuzzFixtures = {
    account: client.account,
    otherAccount: other.id,
    keys: { [other.id]: other.key, [client.account]: client.key },
    basePath: baseUrl.pathname.replace(/\/+$/, ""),
    host: baseUrl.host,
    idPrefix,
    baseModel: `accounts/maas/models/${base}`,
    datasets: [],
    scratchDatasets: [],
    versions: [],
    sftJobs: [],
    dpoJobs: [],
    models,
  };
  if (!needs.datasets) return fixtures;
  const ready = async (suffix: string, rows: unknown[]) => {
    const id = `${idPrefix}-${suffix}`;
    const version = await readyDataset(client, id, rows, made);
    fixtures.datasets.push(id);
    fixtures.versions.push(version);
    return version;
  };
  const sftVersion = await ready(
    "sft",
    Array.from({ length: 12 }, (_, i) => SFT_ROW(i)),
  );
  const dpoVersion = await ready(
    "dpo",
    Array.from({ length: 12 }, (_, i) => DPO_ROW(i)),
  );
  await ready("huge-row", [SFT_ROW(0), SFT_ROW(1), SFT_ROW(2), MEGABYTE_ROW]);
  for (const n of [1, 2, 3]) {
    const id = `${idPrefix}-scratch-${n}`;
    await expectOk(client, "POST", client.accountPath("/datasets"), { datasetId: id, dataset: { displayName: id } });
    made.datasets.add(id);
    fixtures.scratchDatasets.push(id);
  }
  const job = async (collection: string, version: string, suffix: string): Promise<string> => {
    const created = await client.call("POST", client.accountPath(`/${collection}`), {
      baseModel: fixtures.baseModel,
      inputDatasetVersion: version,
      config: { outputModelId: `${idPrefix}-${suffix}`, epochs: 1 },
    });
    if (created.status !== 201)
      throw new Error(`the fuzzer's fixture job (${collection}): ${created.status} ${created.text}`);
    const jobId = String(created.body.name).split("/").at(-1) as string;
    made.jobs.add(`${collection}/${jobId}`);
    return jobId;
  };
  if (needs.sft && profile.models.trainableBase)
    fixtures.sftJobs.push(await job("supervisedFineTuningJobs", sftVersion, "sft-model"));
  if (needs.dpo && profile.models.trainableBase) fixtures.dpoJobs.push(await job("dpoJobs", dpoVersion, "dpo-model"));
  return fixtures;
}

async function expectOk(client: AccountClient, method: string, path: string, body?: unknown) {
  const answer = await client.call(method, path, body);
  if (answer.status !== 200)
    throw new Error(`the fuzzer's fixture: ${method} ${path} → ${answer.status} ${answer.text}`);
  return answer;
}

/** Create, upload, validate, and wait until READY; returns the version's full name. */
export async function readyDataset(client: AccountClient, id: string, rows: unknown[], made: Made): Promise<string> {
  await expectOk(client, "POST", client.accountPath("/datasets"), { datasetId: id, dataset: { displayName: id } });
  made.datasets.add(id);
  const upload = await client.call("POST", client.accountPath(`/datasets/${id}:upload`), undefined, {
    contentType: "application/jsonl",
    data: `${rows.map((r) => JSON.stringify(r)).join("\n")}\n`,
  });
  if (upload.status !== 200) throw new Error(`the fuzzer's fixture upload ${id}: ${upload.status} ${upload.text}`);
  await expectOk(client, "POST", client.accountPath(`/datasets/${id}:validateUpload`), {});
  const deadline = Date.now() + client.profile.timeouts.pollMs;
  for (;;) {
    const got = await expectOk(client, "GET", client.accountPath(`/datasets/${id}`));
    if (got.body?.state === "DATASET_STATE_READY") return String(upload.body.name);
    if (got.body?.state === "DATASET_STATE_FAILED" || Date.now() > deadline)
      throw new Error(`the fuzzer's fixture dataset ${id} did not become READY: ${got.text.slice(0, 300)}`);
    await new Promise((resolve) => setTimeout(resolve, client.profile.timeouts.pollIntervalMs));
  }
}

/**
 * Cancels the jobs and deletes the datasets the run made, and any other dataset of the
 * account whose id carries the run's prefix (one a fuzzed request made); returns what is
 * still there afterwards.
 */
export async function cleanUp(
  client: AccountClient,
  idPrefix: string,
  made: Made,
  canList: boolean,
): Promise<string[]> {
  for (const job of made.jobs) await client.call("POST", client.accountPath(`/${job}:cancel`)).catch(() => undefined);
  if (canList) for (const id of await listOwnDatasets(client, idPrefix)) made.datasets.add(id);
  const left: string[] = [];
  for (const id of made.datasets) {
    const answer = await client.call("DELETE", client.accountPath(`/datasets/${id}`)).catch(() => undefined);
    if (answer && answer.status !== 200 && answer.status !== 404)
      left.push(`dataset ${id} (DELETE → ${answer.status})`);
  }
  return left;
}

async function listOwnDatasets(client: AccountClient, idPrefix: string): Promise<string[]> {
  const ids: string[] = [];
  let token = "";
  for (let page = 0; page < 100; page++) {
    const answer = await client.call(
      "GET",
      client.accountPath(`/datasets?pageSize=100${token ? `&pageToken=${encodeURIComponent(token)}` : ""}`),
    );
    if (answer.status !== 200) break;
    for (const d of (answer.body?.datasets ?? []) as { datasetId?: string; name?: string }[]) {
      const id =
        d.datasetId ??
        String(d.name ?? "")
          .split("/")
          .at(-1) ??
        "";
      if (id.startsWith(`${idPrefix}-`) && (d as { state?: string }).state !== "DATASET_STATE_DELETED") ids.push(id);
    }
    token = answer.body?.nextPageToken ?? "";
    if (!token) break;
  }
  return ids;
}
