/**
 * A fake OpenAI-format fine-tuning API on an ephemeral port, written from the `openai`
 * package's published types (resources/files, resources/fine-tuning/jobs and its
 * checkpoints): files (upload, delete), jobs (create, retrieve, list with metadata filter, cancel), events
 * (newest first, paged backwards with `after`), checkpoints, and chat completions for the
 * models it tuned. Jobs move on a clock of their own: validating_files → queued → running
 * (one step every `stepMs`, a metrics event each, a checkpoint each epoch) → succeeded.
 *
 * Knobs for tests: `outage` (every connection is cut: unreachable), `hold` (running jobs
 * stop advancing), `holdAtStep` (they stop at that step), `rejectCreate` (the next creates answer 4xx), `failWith` (jobs fail at
 * their first step), `loseNextCreateAnswer` (a create made but unanswered), `lose(id)`
 * (the upstream forgets a job: 404).
 */
import http from "node:http";
import type { FileDeleted, FileObject } from "openai/resources/files";
import type { FineTuningJobCheckpoint } from "openai/resources/fine-tuning/jobs/checkpoints";
import type { FineTuningJob, FineTuningJobEvent } from "openai/resources/fine-tuning/jobs/jobs";
import { listenLocally } from "../../harness/listen.ts";

export interface FakeFineTuningOptions {
  /** Base models the fake trains; a create for another is 400 model_not_available. */
  models: string[];
  /** A key the caller must send as `Authorization: Bearer …`; unset: none needed. */
  apiKey?: string;
  /** Milliseconds a running job takes per step (default 20). */
  stepMs?: number;
  /** Milliseconds in validating_files and in queued (default 20 each). */
  phaseMs?: number;
}

interface FakeJob {
  job: FineTuningJob;
  /** The create's `suffix`, part of the tuned model's name. */
  suffix: string | undefined;
  rows: number;
  tokensPerEpoch: number;
  totalSteps: number;
  /** Milliseconds of running time so far, and when it was last brought up to date. */
  runMs: number;
  lastTick: number;
  events: FineTuningJobEvent[];
  checkpoints: FineTuningJobCheckpoint[];
  lost: boolean;
}

export interface FakeFineTuning {
  /** `http://127.0.0.1:port/v1`, the trainer's `baseUrl`. */
  baseUrl: string;
  outage: boolean;
  hold: boolean;
  /** Running jobs stop advancing at this step until it is cleared (a job held mid-run). */
  holdAtStep: number | undefined;
  rejectCreate: { status: number; code: string; param: string | null; message: string } | undefined;
  failWith: { code: string; param: string | null; message: string } | undefined;
  /** The next create makes its job but its answer never arrives (the connection is cut). */
  loseNextCreateAnswer: boolean;
  /** Every job created, in order; and the cancels received. */
  jobs(): FineTuningJob[];
  cancels: string[];
  /** Files uploaded: id → content. */
  files: Map<string, { object: FileObject; content: string }>;
  /** Files deleted (DELETE /files/{id}), in order; their content stays in `files` for the tests. */
  deletedFiles: string[];
  /** Chat completion requests for tuned models: the model each named. */
  completions: string[];
  lose(id: string): void;
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

export async function startFakeFineTuning(options: FakeFineTuningOptions): Promise<FakeFineTuning> {
  const stepMs = options.stepMs ?? 20;
  const phaseMs = options.phaseMs ?? 20;
  const jobs = new Map<string, FakeJob>();
  let seq = 0;
  const nextId = (prefix: string) => `${prefix}-${(++seq).toString().padStart(6, "0")}`;
  const now = () => Math.floor(Date.now() / 1000);

  const fake: FakeFineTuning = {
    baseUrl: "",
    outage: false,
    hold: false,
    holdAtStep: undefined,
    rejectCreate: undefined,
    failWith: undefined,
    loseNextCreateAnswer: false,
    jobs: () => [...jobs.values()].map((j) => j.job),
    cancels: [],
    files: new Map(),
    deletedFiles: [],
    completions: [],
    lose: (id) => {
      const found = jobs.get(id);
      if (found) found.lost = true;
    },
    close: async () => undefined,
  };

  const event = (job: FakeJob, message: string, type: "message" | "metrics" = "message", data?: Json) => {
    job.events.push({
      id: nextId("ftevent"),
      object: "fine_tuning.job.event",
      created_at: now(),
      level: "info",
      message,
      type,
      ...(data ? { data } : {}),
    });
  };

  /** Brings a job up to date with the clock: its status, steps, events and checkpoints. */
  const advance = (fakeJob: FakeJob) => {
    const { job } = fakeJob;
    const tick = Date.now();
    const elapsed = tick - fakeJob.lastTick;
    fakeJob.lastTick = tick;
    if (["succeeded", "failed", "cancelled"].includes(job.status)) return;
    const before = fakeJob.runMs;
    fakeJob.runMs += elapsed;
    // Held: a job may still reach running, but its steps do not advance, however long since the last look.
    if (fake.hold) fakeJob.runMs = Math.min(fakeJob.runMs, Math.max(before, 2 * phaseMs));
    if (job.status === "validating_files" && fakeJob.runMs >= phaseMs) {
      job.status = "queued";
      event(fakeJob, "Files validated, moving job to queued state");
    }
    if (job.status === "queued" && fakeJob.runMs >= 2 * phaseMs) {
      job.status = "running";
      event(fakeJob, "Fine-tuning job started");
    }
    if (job.status !== "running") return;
    let step = lastStep(fakeJob);
    const reached = Math.min(
      fakeJob.totalSteps,
      fake.holdAtStep ?? Infinity,
      Math.floor((fakeJob.runMs - 2 * phaseMs) / stepMs),
    );
    const epochs = job.hyperparameters.n_epochs as number;
    const perEpoch = fakeJob.totalSteps / epochs;
    while (step < reached) {
      step++;
      if (fake.failWith) {
        job.status = "failed";
        job.error = { ...fake.failWith };
        job.finished_at = now();
        event(fakeJob, `Fine-tuning job failed: ${fake.failWith.message}`);
        return;
      }
      const trainLoss = 0.2 + 2 * Math.exp((-3 * step) / fakeJob.totalSteps);
      const epochEnd = Math.abs(step / perEpoch - Math.round(step / perEpoch)) < 1e-9;
      const data: Json = {
        step,
        train_loss: trainLoss,
        total_steps: fakeJob.totalSteps,
        train_mean_token_accuracy: 0.5,
      };
      if (epochEnd && job.validation_file) data.full_valid_loss = trainLoss + 0.1;
      event(fakeJob, `Step ${step}/${fakeJob.totalSteps}: training loss=${trainLoss.toFixed(4)}`, "metrics", data);
      if (epochEnd) {
        const checkpoint: FineTuningJobCheckpoint = {
          id: nextId("ftckpt"),
          object: "fine_tuning.job.checkpoint",
          created_at: now(),
          fine_tuned_model_checkpoint: `${job.model}:ckpt-step-${step}`,
          fine_tuning_job_id: job.id,
          step_number: step,
          metrics: {
            step,
            train_loss: trainLoss,
            ...(data.full_valid_loss ? { full_valid_loss: trainLoss + 0.1 } : {}),
          },
        };
        fakeJob.checkpoints.push(checkpoint);
        event(fakeJob, `Checkpoint created at step ${step}`);
      }
    }
    if (step >= fakeJob.totalSteps) {
      job.status = "succeeded";
      job.finished_at = now();
      job.trained_tokens = fakeJob.tokensPerEpoch * epochs;
      job.fine_tuned_model = `ft:${job.model}:fake-org:${fakeJob.suffix ?? "tuned"}:${job.id}`;
      event(fakeJob, "The job has successfully completed");
    }
  };

  const lastStep = (fakeJob: FakeJob) => {
    const metrics = fakeJob.events.filter((e) => e.type === "metrics");
    return ((metrics.at(-1)?.data as Json | undefined)?.step as number | undefined) ?? 0;
  };

  const createJob = (body: Json): { status: number; body: unknown } => {
    if (fake.rejectCreate) {
      const { status, ...error } = fake.rejectCreate;
      return { status, body: { error: { ...error, type: "invalid_request_error" } } };
    }
    const invalid = (message: string, param: string, code = "invalid_request") => ({
      status: 400,
      body: { error: { message, type: "invalid_request_error", param, code } },
    });
    if (typeof body.model !== "string" || !options.models.includes(body.model))
      return invalid(`Model ${String(body.model)} is not available for fine-tuning`, "model", "model_not_available");
    const file =
      typeof body.training_file === "string" && !fake.deletedFiles.includes(body.training_file)
        ? fake.files.get(body.training_file)
        : undefined;
    if (file === undefined || file.object.purpose !== "fine-tune")
      return invalid("training_file is not an uploaded fine-tune file", "training_file", "invalid_file");
    if (body.validation_file !== undefined && !fake.files.has(String(body.validation_file)))
      return invalid("validation_file is not an uploaded file", "validation_file", "invalid_file");
    const method = body.method as { type?: string; supervised?: Json; dpo?: Json } | undefined;
    const type = method?.type ?? "supervised";
    if (type !== "supervised" && type !== "dpo") return invalid(`method.type ${type} is not supported`, "method.type");
    const hp = ((type === "dpo" ? method?.dpo : method?.supervised)?.hyperparameters ?? {}) as Json;
    for (const [name, value] of Object.entries(hp)) {
      if (!["n_epochs", "batch_size", "learning_rate_multiplier", "beta"].includes(name))
        return invalid(`Unknown hyperparameter ${name}`, `method.${type}.hyperparameters.${name}`);
      if (value !== "auto" && (typeof value !== "number" || !(value > 0)))
        return invalid(`${name} must be a positive number or "auto"`, `method.${type}.hyperparameters.${name}`);
    }
    if (typeof body.suffix === "string" && body.suffix.length > 64) return invalid("suffix is too long", "suffix");
    const lines = file.content.split("\n").filter((l) => l.trim() !== "");
    const epochs = typeof hp.n_epochs === "number" ? hp.n_epochs : 3;
    const batch = typeof hp.batch_size === "number" ? hp.batch_size : 1;
    const job: FineTuningJob = {
      id: nextId("ftjob"),
      object: "fine_tuning.job",
      created_at: now(),
      error: null,
      fine_tuned_model: null,
      finished_at: null,
      hyperparameters: {
        n_epochs: epochs,
        batch_size: batch,
        learning_rate_multiplier: (hp.learning_rate_multiplier as number) ?? 1,
      },
      model: body.model,
      organization_id: "org-fake",
      result_files: [],
      seed: typeof body.seed === "number" ? body.seed : 42,
      status: "validating_files",
      trained_tokens: null,
      training_file: file.object.id,
      validation_file: typeof body.validation_file === "string" ? body.validation_file : null,
      metadata: (body.metadata as Record<string, string> | undefined) ?? null,
      method: { type },
    };
    const fakeJob: FakeJob = {
      job,
      suffix: typeof body.suffix === "string" ? body.suffix : undefined,
      rows: lines.length,
      tokensPerEpoch: lines.reduce((sum, line) => sum + Math.ceil(line.length / 4), 0),
      totalSteps: Math.max(1, Math.ceil(lines.length / batch)) * epochs,
      runMs: 0,
      lastTick: Date.now(),
      events: [],
      checkpoints: [],
      lost: false,
    };
    const shapeError = lines.find((line) => !validRow(line));
    jobs.set(job.id, fakeJob);
    event(fakeJob, `Created fine-tuning job: ${job.id}`);
    if (shapeError !== undefined) {
      job.status = "failed";
      job.error = {
        code: "invalid_training_file",
        message: "The training file has a malformed line",
        param: "training_file",
      };
      job.finished_at = now();
    }
    return { status: 200, body: job };
  };

  const page = <T extends { id: string }>(items: T[], url: URL) => {
    const limit = Number(url.searchParams.get("limit") ?? 20);
    const after = url.searchParams.get("after");
    const start = after === null ? 0 : items.findIndex((i) => i.id === after) + 1;
    const data = items.slice(start, start + limit);
    return { object: "list", data, has_more: start + limit < items.length };
  };

  const route = async (
    req: http.IncomingMessage,
    url: URL,
    raw: Buffer,
  ): Promise<{ status: number; body: unknown } | "stream"> => {
    const path = url.pathname.replace(/^\/v1/, "");
    const notFound = {
      status: 404,
      body: {
        error: { message: `No such object: ${path}`, type: "invalid_request_error", param: null, code: "not_found" },
      },
    };
    if (req.method === "POST" && path === "/files") {
      const form = await new Request("http://fake/files", {
        method: "POST",
        headers: { "content-type": String(req.headers["content-type"]) },
        body: new Uint8Array(raw),
      }).formData();
      const upload = form.get("file");
      if (!(upload instanceof Blob) || form.get("purpose") !== "fine-tune")
        return {
          status: 400,
          body: {
            error: {
              message: "file and purpose=fine-tune are required",
              type: "invalid_request_error",
              param: "file",
              code: null,
            },
          },
        };
      const content = await upload.text();
      const object: FileObject = {
        id: nextId("file"),
        object: "file",
        bytes: Buffer.byteLength(content),
        created_at: now(),
        filename: (upload as File).name ?? "upload.jsonl",
        purpose: "fine-tune",
        status: "processed",
      };
      fake.files.set(object.id, { object, content });
      return { status: 200, body: object };
    }
    const fileMatch = /^\/files\/([^/]+)$/.exec(path);
    if (req.method === "DELETE" && fileMatch) {
      const id = decodeURIComponent(fileMatch[1] as string);
      if (!fake.files.has(id) || fake.deletedFiles.includes(id)) return notFound;
      // FileDeleted; the content stays readable to the test through `files`.
      fake.deletedFiles.push(id);
      return { status: 200, body: { id, object: "file", deleted: true } satisfies FileDeleted };
    }
    if (req.method === "POST" && path === "/fine_tuning/jobs")
      return createJob(JSON.parse(raw.toString("utf8")) as Json);
    if (req.method === "GET" && path === "/fine_tuning/jobs") {
      const filters = [...url.searchParams].flatMap(([k, v]) => {
        const key = /^metadata\[(.+)\]$/.exec(k)?.[1];
        return key ? [[key, v] as const] : [];
      });
      const listed = [...jobs.values()]
        .filter((j) => !j.lost && filters.every(([k, v]) => j.job.metadata?.[k] === v))
        .map((j) => (advance(j), j.job))
        .reverse();
      return { status: 200, body: page(listed, url) };
    }
    const match = /^\/fine_tuning\/jobs\/([^/]+)(\/events|\/checkpoints|\/cancel)?$/.exec(path);
    const fakeJob = match ? jobs.get(decodeURIComponent(match[1] as string)) : undefined;
    if (match && (fakeJob === undefined || fakeJob.lost)) return notFound;
    if (match && fakeJob) {
      advance(fakeJob);
      const part = match[2];
      if (req.method === "GET" && part === undefined) return { status: 200, body: fakeJob.job };
      if (req.method === "GET" && part === "/events")
        return { status: 200, body: page([...fakeJob.events].reverse(), url) };
      if (req.method === "GET" && part === "/checkpoints")
        return { status: 200, body: page([...fakeJob.checkpoints].reverse(), url) };
      if (req.method === "POST" && part === "/cancel") {
        fake.cancels.push(fakeJob.job.id);
        if (["succeeded", "failed", "cancelled"].includes(fakeJob.job.status))
          return {
            status: 400,
            body: {
              error: { message: "Job has already completed", type: "invalid_request_error", param: null, code: null },
            },
          };
        fakeJob.job.status = "cancelled";
        fakeJob.job.finished_at = now();
        event(fakeJob, "Fine-tuning job cancelled");
        return { status: 200, body: fakeJob.job };
      }
    }
    if (req.method === "POST" && path === "/chat/completions") return "stream";
    return notFound;
  };

  const server = http.createServer((req, res) => {
    if (fake.outage) {
      req.socket.destroy();
      return;
    }
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
        res.writeHead(401, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            error: {
              message: "Incorrect API key provided",
              type: "invalid_request_error",
              param: null,
              code: "invalid_api_key",
            },
          }),
        );
        return;
      }
      const url = new URL(req.url ?? "/", "http://fake");
      const raw = Buffer.concat(chunks);
      route(req, url, raw).then(
        (answer) => {
          if (answer === "stream") return chat(raw, res);
          if (fake.loseNextCreateAnswer && req.method === "POST" && url.pathname === "/v1/fine_tuning/jobs") {
            fake.loseNextCreateAnswer = false;
            req.socket.destroy();
            return;
          }
          res.writeHead(answer.status, { "content-type": "application/json" });
          res.end(JSON.stringify(answer.body));
        },
        (error: unknown) => {
          res.writeHead(500, { "content-type": "application/json" });
          res.end(JSON.stringify({ error: { message: String(error), type: "server_error", param: null, code: null } }));
        },
      );
    });
  });

  /** Chat completions for a model this fake tuned: a fixed streamed answer naming the model. */
  const chat = (raw: Buffer, res: http.ServerResponse) => {
    const body = JSON.parse(raw.toString("utf8")) as { model?: string };
    const tuned = [...jobs.values()].some((j) => j.job.fine_tuned_model === body.model);
    if (!tuned) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          error: {
            message: `The model ${body.model} does not exist`,
            type: "invalid_request_error",
            param: "model",
            code: "model_not_found",
          },
        }),
      );
      return;
    }
    fake.completions.push(body.model as string);
    res.writeHead(200, { "content-type": "text/event-stream" });
    const chunk = (delta: Json, finish: string | null = null, usage?: Json) =>
      `data: ${JSON.stringify({ id: "chatcmpl-ft", object: "chat.completion.chunk", created: now(), model: body.model, choices: usage ? [] : [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) })}\n\n`;
    res.write(chunk({ role: "assistant", content: "Ahoy from the " }));
    res.write(chunk({ content: "tuned upstream model." }));
    res.write(chunk({}, "stop"));
    res.write(chunk({}, null, { prompt_tokens: 9, completion_tokens: 7, total_tokens: 16 }));
    res.end("data: [DONE]\n\n");
  };

  const listening = await listenLocally(server);
  fake.baseUrl = `${listening.origin}/v1`;
  fake.close = listening.close;
  return fake;
}

/** A line of an SFT (`messages`) or preference (`input`, `preferred_output`, `non_preferred_output`) training file. */
function validRow(line: string): boolean {
  try {
    const row = JSON.parse(line) as Json;
    if (Array.isArray(row.messages)) return row.messages.length > 0;
    return (
      typeof row.input === "object" && Array.isArray(row.preferred_output) && Array.isArray(row.non_preferred_output)
    );
  } catch {
    return false;
  }
}
