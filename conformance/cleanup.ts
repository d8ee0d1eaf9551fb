/**
 * What a run made, and its removal at the end of the run. Every `POST` that created a
 * dataset or a fine-tuning job is remembered with the key that made it; at the end each job
 * is cancelled and each dataset deleted, and what is reported as left is only what a
 * service still shows afterwards: a 429 or 503 is waited out (its `Retry-After`, bounded)
 * and retried, and an answer that is not a clear success is checked with a `GET`.
 * Trained models stay (the interface has no operation that deletes a model): they are
 * listed as left, by name.
 */
import type { Contract } from "./contract.ts";
import { send, type Exchange } from "./http.ts";
import { waitRetryAfter } from "./rate-limit.ts";
import type { RunContext } from "./run-context.ts";

export interface Created {
  kind: "dataset" | "job";
  name: string;
  method: string;
  url: string;
  headers: Record<string, string>;
}

/** What is still there after the cleanup, each with why, for every report. */
export interface LeftBehind {
  /** Datasets and jobs that could not be removed: `name (why)`. */
  resources: string[];
  /** Models the run's jobs trained: the interface has no operation that deletes one. */
  models: string[];
}

/** Tries per request of the cleanup (the first and the retries after a 429 or 503). */
const ATTEMPTS = 4;
/** The longest single wait of the cleanup for a Retry-After; a longer one is cut to this. */
const LONGEST_WAIT_MS = 30_000;
/** A job being checkpointed or finalised cannot be cancelled: how long to wait for it to end. */
const FINISHING_JOB_MS = 15_000;
const TERMINAL = new Set(["JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED"]);

/**
 * Remembers what an answer says the service made (a dataset, a fine-tuning job), with the
 * key that made it, so the run can remove it at the end whatever the transcript did.
 */
export function noteCreated(created: Created[], contract: Contract, ex: Exchange, baseUrl: string): void {
  if (ex.status < 200 || ex.status > 299 || ex.request.method !== "POST") return;
  const op = contract.findOperation("POST", ex.request.apiPath)?.id;
  const body = ex.json as { name?: unknown; jobId?: unknown } | undefined;
  const auth = Object.fromEntries(
    Object.entries(ex.request.headers).filter(([k]) => k === "authorization" || k === "x-api-key"),
  );
  if (op === "createDataset" && typeof body?.name === "string") {
    created.push({ kind: "dataset", name: body.name, method: "DELETE", url: `${baseUrl}/${body.name}`, headers: auth });
  } else if ((op === "createSupervisedFineTuningJob" || op === "createDpoJob") && typeof body?.jobId === "string") {
    const collection = ex.request.url.split("?")[0] as string;
    created.push({
      kind: "job",
      name: typeof body.name === "string" ? body.name : body.jobId,
      method: "POST",
      url: `${collection}/${encodeURIComponent(body.jobId)}:cancel`,
      headers: auth,
    });
  }
}

type Call = Pick<Created, "method" | "url" | "headers">;

/**
 * Cancels every job the run created (a finished one refuses, which is fine), notes the
 * evaluation dataset and the model of each, then deletes every dataset. Returns only what
 * is really still there.
 */
export async function removeCreated(ctx: RunContext): Promise<LeftBehind> {
  const resources: string[] = [];
  const models = new Set<string>();
  const jobs = ctx.created.filter((c) => c.kind === "job");
  const datasets = ctx.created.filter((c) => c.kind === "dataset");
  const concurrency = Math.max(1, ctx.options.concurrency ?? ctx.options.profile.concurrency);
  await eachAtOnce(jobs, concurrency, async (job) => {
    const cancel = await callPatiently(ctx, job);
    const read = { method: "GET", url: job.url.replace(/:cancel$/, ""), headers: job.headers };
    const state = await jobState(ctx, read);
    const base = job.url.slice(0, job.url.indexOf("/accounts/"));
    // A job may have made a dataset of its own (the evaluation rows it held out): that goes too.
    if (state.evaluation && !datasets.some((d) => d.name === state.evaluation))
      datasets.push({
        kind: "dataset",
        name: state.evaluation,
        method: "DELETE",
        url: `${base}/${state.evaluation}`,
        headers: job.headers,
      });
    if (state.outputModel) models.add(state.outputModel);
    if (state.state !== undefined && !TERMINAL.has(state.state))
      resources.push(`${job.name} (still ${state.state} after :cancel → ${cancel?.status ?? "no answer"})`);
  });
  await eachAtOnce(datasets, concurrency, async (dataset) => {
    const status = (await callPatiently(ctx, dataset))?.status;
    if (status !== undefined && (status === 404 || (status >= 200 && status <= 299))) return;
    // Not a clear answer: the service decides, by whether it still shows the dataset.
    const check = await callPatiently(ctx, { method: "GET", url: dataset.url, headers: dataset.headers });
    if (check?.status === 404) return;
    resources.push(`${dataset.name} (DELETE → ${status ?? "no answer"})`);
  });
  return { resources: resources.sort(), models: [...models].sort() };
}

/** The job's state, evaluation dataset and output model; waits (bounded) for a job that is finishing. */
async function jobState(
  ctx: RunContext,
  read: Call,
): Promise<{ state?: string; evaluation?: string; outputModel?: string }> {
  const deadline = performance.now() + FINISHING_JOB_MS;
  for (;;) {
    const answer = await callPatiently(ctx, read);
    const job = answer?.status === 200 ? (answer.json as Record<string, unknown>) : undefined;
    const state = typeof job?.state === "string" ? job.state : undefined;
    if (state === undefined || TERMINAL.has(state) || performance.now() > deadline) {
      const evaluation = /^accounts\/[^/]+\/datasets\/[^/]+/.exec(String(job?.evaluationDatasetVersion ?? ""))?.[0];
      const outputModel = typeof job?.outputModel === "string" && job.outputModel ? job.outputModel : undefined;
      return {
        ...(state !== undefined ? { state } : {}),
        ...(evaluation ? { evaluation } : {}),
        ...(outputModel ? { outputModel } : {}),
      };
    }
    await new Promise((resolve) => setTimeout(resolve, ctx.options.profile.timeouts.pollIntervalMs || 100));
  }
}

/** One request of the cleanup: a 429 or 503 is waited out (Retry-After, at most 30 s each) and sent again. */
async function callPatiently(ctx: RunContext, c: Call): Promise<Exchange | undefined> {
  let answer: Exchange | undefined;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    answer = await call(ctx, c);
    if (answer === undefined || (answer.status !== 429 && answer.status !== 503) || attempt === ATTEMPTS) return answer;
    const seconds = Number(answer.headers.get("retry-after"));
    const wait = Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 1000 * attempt;
    if (!(await waitRetryAfter(ctx, Math.min(wait, LONGEST_WAIT_MS)))) return answer;
  }
  return answer;
}

async function call(ctx: RunContext, c: Call): Promise<Exchange | undefined> {
  ctx.requests++;
  try {
    return await send(
      {
        method: c.method,
        url: c.url,
        relativePath: c.url,
        apiPath: c.url,
        headers: { ...c.headers, ...(c.method === "POST" ? { "content-type": "application/json" } : {}) },
        ...(c.method === "POST" ? { body: "{}" } : {}),
      },
      ctx.options.profile.timeouts.requestMs,
      ctx.cleanupSignal,
    );
  } catch {
    return undefined;
  }
}

/** Runs `work` on every item, at most `limit` at once (the run's concurrency, so the cleanup loads the service no more than the run did). */
export async function eachAtOnce<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
