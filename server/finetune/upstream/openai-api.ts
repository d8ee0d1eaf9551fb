/**
 * The calls the `openai-fine-tuning` trainer makes to an OpenAI-format fine-tuning API
 * (files, jobs, events, cancel), and how their failures are told apart: the upstream
 * unreachable or busy (retry later), refused (a 4xx: the job cannot run there), or the job
 * gone (404). The shapes read here are those of the `openai` package's
 * resources/fine-tuning and files types; only the fields this trainer uses are named.
 */
import type { UpstreamTrainerSettings } from "../../inference/catalog.ts";
// undici's own fetch, not Node's bundled one: when a cancelled job aborts a call while its
// answer is still arriving, Node 24's fetch enqueues into the closed body stream and the
// process sees an unhandled rejection (seen in test/finetune/upstream-conformance.slow.test.ts).
import { fetch, FormData } from "undici";
import { credential } from "../../settings/environment.ts";

/** `fine_tuning.job`, as far as the trainer reads it. */
export interface UpstreamJob {
  id: string;
  status: "validating_files" | "queued" | "running" | "succeeded" | "failed" | "cancelled";
  fine_tuned_model: string | null;
  trained_tokens: number | null;
  error: { code: string; message: string; param: string | null } | null;
  hyperparameters?: { n_epochs?: "auto" | number };
  metadata?: Record<string, string> | null;
}

/** `fine_tuning.job.event`. */
export interface UpstreamEvent {
  id: string;
  created_at: number;
  level: "info" | "warn" | "error";
  message: string;
  type?: "message" | "metrics";
  data?: unknown;
}

/** What the trainer sends when it creates the upstream job (JobCreateParams). */
export interface UpstreamJobCreate {
  model: string;
  training_file: string;
  validation_file?: string;
  suffix?: string;
  seed?: number;
  metadata: Record<string, string>;
  method:
    | { type: "supervised"; supervised: { hyperparameters: Record<string, number> } }
    | { type: "dpo"; dpo: { hyperparameters: Record<string, number> } };
}

/** The upstream could not be reached, timed out, or answered 429 or 5xx: worth asking again later. */
export class UpstreamUnreachable extends Error {
  override name = "UpstreamUnreachable";
}

/** The upstream answered 4xx (other than 404 and 429): the request will not work however often it is sent. */
export class UpstreamRefused extends Error {
  override name = "UpstreamRefused";
  readonly status: number;
  /** The upstream's error code and param, e.g. `invalid_training_file`, `training_file`. */
  readonly code: string | undefined;
  readonly param: string | undefined;
  constructor(status: number, message: string, code?: string, param?: string) {
    super(message);
    this.status = status;
    this.code = code;
    this.param = param;
  }
}

/** The upstream does not know the object (404): a job it lost. */
export class UpstreamNotFound extends Error {
  override name = "UpstreamNotFound";
}

export class OpenAiFineTuningApi {
  readonly #base: string;
  readonly #apiKey: string | undefined;
  readonly #timeoutMs: number;

  constructor(settings: UpstreamTrainerSettings) {
    this.#base = settings.baseUrl.replace(/\/$/, "");
    this.#apiKey = credential(settings.apiKeyEnv);
    this.#timeoutMs = settings.timeoutMs ?? 30_000;
  }

  /** POST /files (purpose fine-tune): the JSONL as the upstream's training or validation file; its id. */
  async uploadFile(filename: string, jsonl: string, signal: AbortSignal): Promise<string> {
    const form = new FormData();
    form.set("purpose", "fine-tune");
    form.set("file", new Blob([jsonl], { type: "application/jsonl" }), filename);
    const file = (await this.#call("POST", "/files", signal, form)) as { id: string };
    return file.id;
  }

  /** DELETE /files/{id}: an uploaded file the upstream no longer needs. */
  async deleteFile(id: string, signal: AbortSignal): Promise<void> {
    await this.#call("DELETE", `/files/${encodeURIComponent(id)}`, signal);
  }

  createJob(body: UpstreamJobCreate, signal: AbortSignal): Promise<UpstreamJob> {
    return this.#call("POST", "/fine_tuning/jobs", signal, body) as Promise<UpstreamJob>;
  }

  getJob(id: string, signal: AbortSignal): Promise<UpstreamJob> {
    return this.#call("GET", `/fine_tuning/jobs/${encodeURIComponent(id)}`, signal) as Promise<UpstreamJob>;
  }

  cancelJob(id: string, signal: AbortSignal): Promise<UpstreamJob> {
    return this.#call("POST", `/fine_tuning/jobs/${encodeURIComponent(id)}/cancel`, signal) as Promise<UpstreamJob>;
  }

  /**
   * Cancels the job unless it has already ended there; whether it was cancelled now. A job
   * the upstream no longer knows counts as ended.
   */
  async cancelIfRunning(id: string, signal: AbortSignal): Promise<boolean> {
    try {
      const job = await this.getJob(id, signal);
      if (job.status === "succeeded" || job.status === "failed" || job.status === "cancelled") return false;
      await this.cancelJob(id, signal);
      return true;
    } catch (error) {
      if (error instanceof UpstreamNotFound) return false;
      throw error;
    }
  }

  /** The upstream job this server created for `key`=`value` in its metadata, if any (newest first). */
  async findJob(key: string, value: string, signal: AbortSignal): Promise<UpstreamJob | undefined> {
    const query = new URLSearchParams({ [`metadata[${key}]`]: value, limit: "10" });
    const page = (await this.#call("GET", `/fine_tuning/jobs?${query}`, signal)) as { data: UpstreamJob[] };
    return page.data.find((job) => job.metadata?.[key] === value);
  }

  /** The step of the job's newest checkpoint (GET …/checkpoints, newest first), or undefined when it has none. */
  async latestCheckpointStep(id: string, signal: AbortSignal): Promise<number | undefined> {
    const page = (await this.#call(
      "GET",
      `/fine_tuning/jobs/${encodeURIComponent(id)}/checkpoints?limit=1`,
      signal,
    )) as {
      data: { step_number: number }[];
    };
    return page.data[0]?.step_number;
  }

  /**
   * The job's events newer than `afterId`, oldest first. The API lists newest first and
   * pages backwards (`after` is the last event of the previous page), so pages are read
   * until `afterId` or the first event is reached.
   */
  async eventsSince(id: string, afterId: string | undefined, signal: AbortSignal): Promise<UpstreamEvent[]> {
    const events: UpstreamEvent[] = [];
    let cursor: string | undefined;
    for (;;) {
      const query = new URLSearchParams({ limit: "100", ...(cursor ? { after: cursor } : {}) });
      const page = (await this.#call("GET", `/fine_tuning/jobs/${encodeURIComponent(id)}/events?${query}`, signal)) as {
        data: UpstreamEvent[];
        has_more: boolean;
      };
      for (const event of page.data) {
        if (event.id === afterId) return events.reverse();
        events.push(event);
      }
      cursor = page.data.at(-1)?.id;
      if (!page.has_more || cursor === undefined) return events.reverse();
    }
  }

  async #call(method: string, path: string, signal: AbortSignal, body?: FormData | object): Promise<unknown> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (this.#apiKey) headers.authorization = `Bearer ${this.#apiKey}`;
    if (body !== undefined && !(body instanceof FormData)) headers["content-type"] = "application/json";
    let response: Awaited<ReturnType<typeof fetch>>;
    try {
      response = await fetch(`${this.#base}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : body instanceof FormData ? body : JSON.stringify(body),
        signal: AbortSignal.any([signal, AbortSignal.timeout(this.#timeoutMs)]),
      });
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      throw new UpstreamUnreachable(`${method} ${path}: ${(error as Error).message}`, { cause: error });
    }
    const text = await response.text().catch(() => "");
    if (response.ok) {
      try {
        return JSON.parse(text);
      } catch {
        throw new UpstreamUnreachable(`${method} ${path}: the answer is not JSON`);
      }
    }
    if (response.status === 404) throw new UpstreamNotFound(`${method} ${path}: 404`);
    if (response.status === 429 || response.status >= 500 || response.status === 408)
      throw new UpstreamUnreachable(`${method} ${path}: ${response.status}`);
    const error = parseError(text);
    throw new UpstreamRefused(response.status, error.message ?? `HTTP ${response.status}`, error.code, error.param);
  }
}

function parseError(text: string): { message?: string; code?: string; param?: string } {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown; code?: unknown; param?: unknown } };
    const str = (v: unknown) => (typeof v === "string" ? v : undefined);
    return { message: str(body.error?.message), code: str(body.error?.code), param: str(body.error?.param) };
  } catch {
    return {};
  }
}
