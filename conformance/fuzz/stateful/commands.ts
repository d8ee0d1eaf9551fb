/**
 * The commands of the stateful fuzzer: one per operation of the contract a user (or the
 * operator) performs, each with fast-check's `check` (may it run in this model state) and
 * `run` (send it, compare the answer with the model, update the model).
 *
 * Ids come from small pools (three datasets, three output models, two idempotency keys), so
 * that random sequences collide: upload to a deleted dataset, a second job for a taken
 * output model, a retried create, a cancel of a finished job.
 */
import fc from "fast-check";
import type { Answer, RequestSpec } from "./http.ts";
import {
  COLLECTION,
  STALE_MS,
  INITIAL_BALANCE_MICROS,
  ROWS,
  TERMINAL,
  change,
  datasetStates,
  gateOutcomes,
  learnVersionState,
  outputModelTaken,
  possible,
  request,
  rowCount,
  trainable,
  transitionProblem,
  versionStates,
  wireId,
  type Content,
  type JobModel,
  type JobType,
  type Model,
  type Real,
} from "./model.ts";

/** The answer disagrees with the model. */
export class ModelMismatch extends Error {
  override name = "ModelMismatch";
  /** The rule of the command that saw it (rules.yaml). */
  readonly rule: string;
  constructor(message: string, rule: string) {
    super(message);
    this.rule = rule;
  }
}

const DATASET_IDS = ["d1", "d2"];
/** Whether Upload may draw the over-the-limit upload (set with the arbitraries: the reference hook knows the limit). */
let hugeUploads = false;
const OUTPUT_MODELS = ["m1", "m2", "m3"];
const IDEMPOTENCY_KEYS = [undefined, "k1", "k2"];

type Command = fc.AsyncCommand<Model, Real>;

function fail(r: Real, what: string, answer?: Answer): never {
  throw new ModelMismatch(
    `${r.account}: ${what}${answer ? `\n  answer: ${answer.status} ${answer.code ?? ""} (x-request-id ${answer.requestId}) ${answer.text.slice(0, 400)}` : ""}`,
    r.rule,
  );
}

/** Checks the gate refusals; returns true when the answer was one of them (the call changed nothing). */
function refusedAtGate(m: Model, r: Real, answer: Answer, paid: boolean): boolean {
  const gates = gateOutcomes(m, paid);
  if (answer.code !== undefined && gates.has(answer.code)) return true;
  if (!gates.has("PASS")) fail(r, `expected one of ${[...gates].join(", ")}`, answer);
  return false;
}

function expectStatus(r: Real, answer: Answer, status: number, code?: string): void {
  if (answer.status !== status || (code !== undefined && answer.code !== code))
    fail(r, `expected ${status}${code ? ` ${code}` : ""}`, answer);
}

function note(r: Real, command: { toString(): string }, answer: Answer | string): void {
  if (process.env.STATEFUL_TRACE === "1")
    console.log(
      `  [${r.account}] ${command.toString()} → ${typeof answer === "string" ? answer : `${answer.status}${answer.code ? ` ${answer.code}` : ""}`}`,
    );
  r.trace.push(
    `${command.toString()} → ${typeof answer === "string" ? answer : `${answer.status}${answer.code ? ` ${answer.code}` : ""}`}`,
  );
}

// ---------------------------------------------------------------------------
// Datasets
// ---------------------------------------------------------------------------

/** A command on the dataset `id` of the pool; it may run in any model state. */
abstract class DatasetCommand {
  readonly id: string;
  constructor(id: string) {
    this.id = id;
  }
  check = () => true;

  /** Sends `method` to the dataset (its path plus `suffix`) and notes the answer. */
  protected async send(r: Real, method: string, suffix: string, body: Pick<RequestSpec, "json" | "raw"> = {}) {
    const answer = await request(r, {
      method,
      path: `/accounts/${r.account}/datasets/${wireId(r, this.id)}${suffix}`,
      label: `datasets/{d}${suffix.replace(/\?.*/, "")}`,
      ...body,
    });
    note(r, this, answer);
    return answer;
  }
}

class CreateDataset extends DatasetCommand implements Command {
  async run(m: Model, r: Real) {
    r.rule = "datasets.create";
    const answer = await request(r, {
      method: "POST",
      path: `/accounts/${r.account}/datasets`,
      label: "datasets",
      json: { datasetId: wireId(r, this.id), dataset: { displayName: this.id } },
    });
    note(r, this, answer);
    if (refusedAtGate(m, r, answer, false)) return;
    if (m.datasets.has(this.id)) return expectStatus(r, answer, 409, "ALREADY_EXISTS");
    expectStatus(r, answer, 200);
    if (answer.body.state !== "DATASET_STATE_CREATING") fail(r, "a new dataset is CREATING", answer);
    m.datasets.set(this.id, { deleted: false, versions: [] });
  }
  override toString = () => `createDataset(${this.id})`;
}

function uploadText(content: Content | "huge", maxUploadBytes: number): string {
  const sft = (i: number) => ({
    messages: [
      { role: "user", content: `Hello ${i}. Tell me about the sea.` },
      { role: "assistant", content: "Ahoy, matey! The sea is calm." },
    ],
  });
  const dpo = (i: number) => ({
    input: { messages: [{ role: "user", content: `Hello ${i}. Tell me about the sea.` }] },
    preferred_output: [{ role: "assistant", content: "Ahoy, matey! The sea is calm." }],
    non_preferred_output: [{ role: "assistant", content: "The sea is water." }],
  });
  const rows = Array.from({ length: ROWS }, (_, i) => JSON.stringify(content === "dpo" ? dpo(i) : sft(i)));
  if (content === "invalid") rows.splice(2, 0, '{"messages": [{"role": "user", "content": "no answer"');
  // About 200k tokens in one row: estimates and jobs must count it as skipped, not fail.
  if (content === "megarow")
    rows.push(
      JSON.stringify({
        messages: [
          { role: "user", content: "word ".repeat(200_000) },
          { role: "assistant", content: "Ahoy." },
        ],
      }),
    );
  if (content === "huge") return `${JSON.stringify(sft(0))}\n`.repeat(Math.ceil((maxUploadBytes * 1.2) / 100));
  return `${rows.join("\n")}\n`;
}

class Upload extends DatasetCommand implements Command {
  readonly content: Content | "huge";
  constructor(id: string, content: Content | "huge") {
    super(id);
    this.content = content;
  }
  // A huge upload needs to know the limit: only with the reference hook that says it.
  override check = () => this.content !== "huge" || hugeUploads;
  async run(m: Model, r: Real) {
    r.rule = "datasets.upload";
    const answer = await this.send(r, "POST", ":upload", {
      raw: { contentType: "application/jsonl", data: uploadText(this.content, r.hooks.maxUploadBytes ?? 0) },
    });
    // The declared size is refused before anything else in the handler, and before the body is read.
    if (this.content === "huge" && answer.code === "MEDIA_TOO_LARGE") return expectStatus(r, answer, 413);
    if (refusedAtGate(m, r, answer, false)) return;
    const d = m.datasets.get(this.id);
    if (this.content === "huge") return fail(r, "an upload over MAX_UPLOAD_BYTES is 413 MEDIA_TOO_LARGE", answer);
    if (d === undefined) return expectStatus(r, answer, 404, "NOT_FOUND");
    if (d.deleted) return expectStatus(r, answer, 400, "INVALID_REQUEST");
    expectStatus(r, answer, 200);
    const expectedNo = (d.versions.at(-1)?.no ?? 0) + 1;
    if (answer.body.versionNo !== expectedNo) fail(r, `the upload is version ${expectedNo}`, answer);
    if (answer.body.state !== "DATASET_VERSION_STATE_UPLOADING")
      fail(r, "an acknowledged upload is UPLOADING until validated", answer);
    d.versions.push({ no: expectedNo, content: this.content, validation: "none" });
  }
  override toString = () => `upload(${this.id}, ${this.content})`;
}

class Validate extends DatasetCommand implements Command {
  async run(m: Model, r: Real) {
    r.rule = "datasets.validate-upload";
    const answer = await this.send(r, "POST", ":validateUpload", { json: {} });
    if (refusedAtGate(m, r, answer, false)) return;
    const d = m.datasets.get(this.id);
    if (d === undefined) return expectStatus(r, answer, 404, "NOT_FOUND");
    const latest = d.versions.at(-1);
    if (d.deleted || latest === undefined) return expectStatus(r, answer, 400, "INVALID_REQUEST");
    expectStatus(r, answer, 200);
    latest.validation = "pending";
    const allowed = datasetStates(d);
    if (!allowed.includes(answer.body.state))
      fail(r, `validateUpload answers a dataset in ${allowed.join(" or ")}`, answer);
    learnVersionState(latest, answer.body.state.replace("DATASET_STATE_", "DATASET_VERSION_STATE_"));
  }
  override toString = () => `validate(${this.id})`;
}

class GetDataset extends DatasetCommand implements Command {
  async run(m: Model, r: Real) {
    r.rule = "datasets.get";
    const answer = await this.send(r, "GET", "?view=DATASET_VIEW_FULL");
    if (refusedAtGate(m, r, answer, false)) return;
    const d = m.datasets.get(this.id);
    if (d === undefined) return expectStatus(r, answer, 404, "NOT_FOUND");
    expectStatus(r, answer, 200);
    checkDatasetAnswer(r, d, answer);
  }
  override toString = () => `getDataset(${this.id})`;
}

/** A full-view dataset answer against the model: its state, and exactly the acknowledged versions in legal states. */
export function checkDatasetAnswer(
  r: Real,
  d: NonNullable<ReturnType<Model["datasets"]["get"]>>,
  answer: Answer,
): void {
  const allowed = datasetStates(d);
  const versions = (answer.body.versions ?? []) as {
    versionNo: number;
    state: string;
    exampleCount: string;
    validation: { firstInvalidLine?: unknown };
  }[];
  if (versions.map((v) => v.versionNo).join(",") !== d.versions.map((v) => v.no).join(","))
    fail(r, `the versions are the acknowledged uploads ${d.versions.map((v) => v.no).join(",") || "(none)"}`, answer);
  for (const [i, v] of d.versions.entries()) {
    const shown = versions[i] as (typeof versions)[number];
    if (!versionStates(v).includes(shown.state)) fail(r, `version ${v.no} is ${versionStates(v).join(" or ")}`, answer);
    learnVersionState(v, shown.state);
    if (shown.state === "DATASET_VERSION_STATE_FAILED" && shown.validation.firstInvalidLine === undefined)
      fail(r, `FAILED version ${v.no} names its first bad line`, answer);
    if (shown.state === "DATASET_VERSION_STATE_READY" && Number(shown.exampleCount) !== rowCount(v.content))
      fail(r, `READY version ${v.no} counts ${rowCount(v.content)} examples`, answer);
  }
  // The dataset's own state was read with its versions: it must fit the model as it was before this answer taught it anything.
  if (!allowed.includes(answer.body.state)) fail(r, `the dataset is ${allowed.join(" or ")}`, answer);
}

class DeleteDataset extends DatasetCommand implements Command {
  async run(m: Model, r: Real) {
    r.rule = "datasets.delete";
    const answer = await this.send(r, "DELETE", "");
    if (refusedAtGate(m, r, answer, false)) return;
    const d = m.datasets.get(this.id);
    if (d === undefined) return expectStatus(r, answer, 404, "NOT_FOUND");
    expectStatus(r, answer, 200);
    if (answer.body.state !== "DATASET_STATE_DELETED") fail(r, "a deleted dataset is DELETED", answer);
    d.deleted = true;
  }
  override toString = () => `deleteDataset(${this.id})`;
}

// ---------------------------------------------------------------------------
// Jobs
// ---------------------------------------------------------------------------

function jobBody(r: Real, datasetId: string, outputModelId: string) {
  return {
    baseModel: r.baseModel,
    inputDatasetVersion: `accounts/${r.account}/datasets/${wireId(r, datasetId)}`,
    config: { outputModelId: wireId(r, outputModelId), epochs: 1 },
  };
}

/**
 * "*" names, at run time, a dataset whose newest version is READY, with the job type its rows
 * train (random ids rarely line up with a READY dataset); "d1" when there is none.
 */
function resolveDataset(m: Model, type: JobType, datasetId: string): { type: JobType; datasetId: string } {
  if (datasetId !== "*") return { type, datasetId };
  for (const [id, d] of m.datasets) {
    const latest = d.versions.at(-1);
    if (!d.deleted && latest?.validation === "DATASET_VERSION_STATE_READY")
      return { type: latest.content === "dpo" ? "dpo" : "sft", datasetId: id };
  }
  return { type, datasetId: DATASET_IDS[0] as string };
}

/** When a call on the dataset answers 200, a pending validation of its newest version has ended READY. */
function learnReady(m: Model, datasetId: string): void {
  const latest = m.datasets.get(datasetId)?.versions.at(-1);
  if (latest?.validation === "pending") latest.validation = "DATASET_VERSION_STATE_READY";
}

class Estimate implements Command {
  readonly type: JobType;
  readonly datasetId: string;
  readonly outputModelId: string;
  constructor(type: JobType, datasetId: string, outputModelId: string) {
    this.type = type;
    this.datasetId = datasetId;
    this.outputModelId = outputModelId;
  }
  check = () => true;
  async run(m: Model, r: Real) {
    r.rule = "finetune.estimate";
    const { type, datasetId } = resolveDataset(m, this.type, this.datasetId);
    const answer = await request(r, {
      method: "POST",
      path: `/accounts/${r.account}/${COLLECTION[type]}:estimateCost`,
      label: `${COLLECTION[type]}:estimateCost`,
      json: jobBody(r, datasetId, this.outputModelId),
    });
    note(r, this, answer);
    if (refusedAtGate(m, r, answer, false)) return;
    const can = trainable(m, datasetId, type);
    if (can.verdict === "no" || (can.verdict === "maybe" && answer.status !== 200))
      return expectStatus(r, answer, can.code === "NOT_FOUND" ? 404 : 400, can.code);
    expectStatus(r, answer, 200);
    learnReady(m, datasetId);
    const latest = m.datasets.get(datasetId)?.versions.at(-1);
    if (latest && Number(answer.body.estimate.exampleCount) !== rowCount(latest.content))
      fail(r, `the estimate counts ${rowCount(latest.content)} examples`, answer);
    // egress says whether the create would be allowed now: the balance, the budget (as a paid call's gate, within
    // the caches' bound) and then the output model id (server/finetune/plan.ts createRefusal).
    const taken = outputModelTaken(m, this.outputModelId);
    const refusals = new Set(
      [...gateOutcomes({ ...m, suspended: { value: false, previous: false, changedAt: 0 } }, true)].map((g) =>
        g === "PASS" ? (taken ? "ALREADY_EXISTS" : "") : g,
      ),
    );
    const shown = answer.body.egress.allowed ? "" : (answer.body.egress.reason?.code ?? "?");
    if (!refusals.has(shown))
      fail(
        r,
        `egress is ${[...refusals].map((c) => (c === "" ? "allowed" : `refused with ${c}`)).join(" or ")}`,
        answer,
      );
  }
  toString = () => `estimate(${this.type}, ${this.datasetId}, ${this.outputModelId})`;
}

class CreateJob implements Command {
  readonly type: JobType;
  readonly datasetId: string;
  readonly outputModelId: string;
  readonly idempotencyKey: string | undefined;
  /** Send the same create to every server at once (a client retrying on another server). */
  readonly together: boolean;
  constructor(
    type: JobType,
    datasetId: string,
    outputModelId: string,
    idempotencyKey: string | undefined,
    together: boolean,
  ) {
    this.type = type;
    this.datasetId = datasetId;
    this.outputModelId = outputModelId;
    this.idempotencyKey = idempotencyKey;
    this.together = together;
  }
  check = () => true;
  async run(m: Model, r: Real) {
    const { type, datasetId } = resolveDataset(m, this.type, this.datasetId);
    r.rule = this.idempotencyKey ? "finetune.idempotency" : "finetune.create";
    const body = jobBody(r, datasetId, this.outputModelId);
    const headers: Record<string, string> = this.idempotencyKey
      ? { "idempotency-key": wireId(r, this.idempotencyKey) }
      : {};
    const send = (server?: number) =>
      request(r, {
        method: "POST",
        path: `/accounts/${r.account}/${COLLECTION[type]}`,
        label: COLLECTION[type],
        json: body,
        headers,
        server,
      });
    const answers =
      this.together && this.idempotencyKey ? await Promise.all(r.baseUrls().map((_, i) => send(i))) : [await send()];
    // Sent to every server at once, the answer that created a job (if one did) is the one the model follows.
    const answer = answers.find((a) => a.status === 201) ?? (answers[0] as Answer);
    note(r, this, answers.map((a) => `${a.status}${a.code ? ` ${a.code}` : ""}`).join(" | "));
    const can = trainable(m, datasetId, type);
    if (answers.length > 1) {
      // Refusals at the gate may differ between servers within the caches' bound after an admin change. And while
      // the dataset's validation may still be running (trainable "maybe"), one server may find it VALIDATING (400,
      // nothing created, so nothing recorded under the key) and the other, a moment later, READY and create the job:
      // the key returns "the job the first request created", and a refused request created none.
      const gates = gateOutcomes(m, true);
      const validating = (a: Answer) => can.verdict === "maybe" && a.status === 400 && a.code === can.code;
      const decided = answers.filter((a) => (a.code === undefined || !gates.has(a.code)) && !validating(a));
      const names = new Set(decided.map((a) => (a.status === 201 ? a.body.name : `${a.status} ${a.code}`)));
      if (names.size > 1)
        fail(
          r,
          `the same create with one Idempotency-Key sent to ${answers.length} servers at once got different answers: ${[...names].join(" / ")}`,
          answer,
        );
    }
    if (refusedAtGate(m, r, answer, true)) return;
    const fingerprint = JSON.stringify(body);
    const slot = this.idempotencyKey ? m.idempotency.get(`${type} ${this.idempotencyKey}`) : undefined;
    if (slot && slot.body === fingerprint) {
      // The contract: repeating a request with the same key returns the job the first request created.
      expectStatus(r, answer, 201);
      if (answer.body.jobId !== slot.jobId) fail(r, `the retry returns the first job ${slot.jobId}`, answer);
      return;
    }
    if (slot) {
      // Another body under a used key: a conflict, unless the new body is refused first for what it names.
      const allowed = ["IDEMPOTENCY_CONFLICT", ...(can.verdict === "yes" ? [] : [can.code])];
      if (!allowed.includes(answer.code ?? ""))
        fail(r, `a used Idempotency-Key with another body is ${allowed.join(" or ")}`, answer);
      return;
    }
    if (can.verdict === "no" || (can.verdict === "maybe" && answer.status !== 201))
      return expectStatus(r, answer, can.code === "NOT_FOUND" ? 404 : 400, can.code);
    learnReady(m, datasetId);
    if (outputModelTaken(m, this.outputModelId)) {
      // A job that holds the name may have failed unseen (it should not: the data is valid).
      return expectStatus(r, answer, 409, "ALREADY_EXISTS");
    }
    expectStatus(r, answer, 201);
    // Sent to every server at once, only one answer created the job; the others returned it as it was by then
    // (a worker may have started it already). The creating answer shows it QUEUED.
    if (answers.length === 1 && answer.body.state !== "JOB_STATE_QUEUED") fail(r, "a new job is QUEUED", answer);
    if (answers.length > 1 && !answers.some((a) => a.body.state === "JOB_STATE_QUEUED"))
      fail(r, "one of the answers, the one that created the job, shows it QUEUED", answer);
    const jobId = answer.body.jobId as string;
    if (m.jobs.has(jobId)) fail(r, `a new job, not ${jobId} again`, answer);
    const job: JobModel = {
      jobId,
      type,
      outputModelId: this.outputModelId,
      seen: ["JOB_STATE_QUEUED"],
      cancelRefused: false,
      processedTokens: 0,
    };
    m.jobs.set(jobId, job);
    observeJob(r, job, answer);
    if (this.idempotencyKey) m.idempotency.set(`${type} ${this.idempotencyKey}`, { body: fingerprint, jobId });
  }
  toString = () =>
    `createJob(${this.type}, ${this.datasetId}, ${this.outputModelId}${this.idempotencyKey ? `, key ${this.idempotencyKey}` : ""}${this.together ? ", to every server at once" : ""})`;
}

/** The job at `index` among the model's jobs (in creation order), or one that never existed. */
function pickJob(m: Model, index: number): JobModel | undefined {
  const jobs = [...m.jobs.values()];
  return jobs.length === 0 ? undefined : jobs[index % jobs.length];
}

const ABSENT_JOB = "sft-00000000deadbeef";

/**
 * A command on the job at `index` of the model's jobs (see pickJob); with no job yet, on an
 * id that names none. It may run in any model state unless a subclass says otherwise.
 */
abstract class JobCommand {
  readonly index: number;
  constructor(index: number) {
    this.index = index;
  }
  check: (m: Readonly<Model>) => boolean = () => true;

  /** Sends `method` to the job (or ABSENT_JOB) through `type`'s collection, its path plus `suffix` and `query`; notes the answer. */
  protected async send(r: Real, job: JobModel | undefined, type: JobType, method: string, suffix = "", query = "") {
    const answer = await request(r, {
      method,
      path: `/accounts/${r.account}/${COLLECTION[type]}/${job?.jobId ?? ABSENT_JOB}${suffix}${query}`,
      label: `${COLLECTION[type]}/{job}${suffix}`,
    });
    note(r, this, answer);
    return answer;
  }
}

/** Records a job state an answer showed, after checking it is a legal next state. */
export function observeJob(r: Real, job: JobModel, answer: Answer): void {
  const state = answer.body.state as string;
  const problem = transitionProblem(job, state);
  if (problem) fail(r, `job ${job.jobId}: ${problem} (seen ${job.seen.join(" → ")})`, answer);
  if (job.seen.at(-1) !== state) job.seen.push(state);
  job.processedTokens = Number(answer.body.progress?.processedTokens ?? 0);
  if (
    state === "JOB_STATE_SUCCEEDED" &&
    answer.body.outputModel !== `accounts/${r.account}/models/${wireId(r, job.outputModelId)}`
  )
    fail(r, "a SUCCEEDED job names its output model", answer);
  if (TERMINAL.has(state) && !answer.body.completeTime) fail(r, `a ${state} job has its completeTime`, answer);
  // Billing: SUCCEEDED and CANCELLED jobs for the tokens they trained (CANCELLED: before the cancel), FAILED and EXPIRED none.
  const billed = String(answer.body.execution?.billedTokens ?? "");
  if (state === "JOB_STATE_SUCCEEDED" || state === "JOB_STATE_CANCELLED") {
    if (billed !== String(job.processedTokens)) fail(r, `a ${state} job is billed for its processed tokens`, answer);
  } else if (billed !== "0") fail(r, `a ${state} job is not billed (yet)`, answer);
}

class GetJob extends JobCommand implements Command {
  readonly wrongCollection: boolean;
  constructor(index: number, wrongCollection: boolean) {
    super(index);
    this.wrongCollection = wrongCollection;
  }
  async run(m: Model, r: Real) {
    r.rule = this.wrongCollection ? "finetune.collections" : "finetune.get";
    const job = pickJob(m, this.index);
    const type = job === undefined ? "sft" : this.wrongCollection ? (job.type === "sft" ? "dpo" : "sft") : job.type;
    const answer = await this.send(r, job, type, "GET");
    if (refusedAtGate(m, r, answer, false)) return;
    if (job === undefined || this.wrongCollection) return expectStatus(r, answer, 404, "NOT_FOUND");
    expectStatus(r, answer, 200);
    observeJob(r, job, answer);
  }
  override toString = () => `getJob(#${this.index}${this.wrongCollection ? ", through the other collection" : ""})`;
}

class CancelJob extends JobCommand implements Command {
  async run(m: Model, r: Real) {
    r.rule = "finetune.cancel";
    const job = pickJob(m, this.index);
    const answer = await this.send(r, job, job?.type ?? "dpo", "POST", ":cancel");
    if (refusedAtGate(m, r, answer, false)) return;
    if (job === undefined) return expectStatus(r, answer, 404, "NOT_FOUND");
    const last = job.seen.at(-1) as string;
    if (TERMINAL.has(last)) return expectStatus(r, answer, 409, "JOB_STATE_INVALID");
    if (answer.status === 409 && answer.code === "JOB_STATE_INVALID") {
      // Saving a checkpoint, finalizing, or ended between the last look and the cancel: only
      // QUEUED and RUNNING jobs can be cancelled. It is not QUEUED again.
      job.cancelRefused = true;
      return;
    }
    expectStatus(r, answer, 200);
    if (answer.body.state !== "JOB_STATE_CANCELLED") fail(r, "a cancelled job is CANCELLED", answer);
    observeJob(r, job, answer);
  }
  override toString = () => `cancelJob(#${this.index})`;
}

class Metrics extends JobCommand implements Command {
  async run(m: Model, r: Real) {
    r.rule = "finetune.metrics";
    const job = pickJob(m, this.index);
    const answer = await this.send(r, job, job?.type ?? "sft", "GET", "/metrics", "?maxPoints=10000");
    if (refusedAtGate(m, r, answer, false)) return;
    if (job === undefined) return expectStatus(r, answer, 404, "NOT_FOUND");
    expectStatus(r, answer, 200);
    const steps = (answer.body.points as { step: string }[]).map((p) => Number(p.step));
    if (steps.some((s, i) => s !== i + 1))
      fail(r, `job ${job.jobId}'s curve has every step once, in order: ${steps.join(",")}`, answer);
  }
  override toString = () => `metrics(#${this.index})`;
}

// ---------------------------------------------------------------------------
// Inference
// ---------------------------------------------------------------------------

class Infer implements Command {
  /** "base", an output model id of this account, "foreign:<id>" (another account's), or "*": a model this account trained, if any. */
  readonly model: string;
  constructor(model: string) {
    this.model = model;
  }
  check = () => true;
  async run(m: Model, r: Real) {
    r.rule = "finetune.output-model";
    const trained = [...m.jobs.values()].find((j) => j.seen.at(-1) === "JOB_STATE_SUCCEEDED")?.outputModelId;
    const model = this.model === "*" ? (trained ?? "base") : this.model;
    const foreign = model.startsWith("foreign:");
    const name =
      model === "base"
        ? r.chatModel
        : foreign
          ? `accounts/${r.others[0]}/models/${model.slice(8)}`
          : `accounts/${r.account}/models/${wireId(r, model)}`;
    const answer = await request(r, {
      method: "POST",
      path: "/responses",
      label: model === "base" ? "responses (base)" : foreign ? "responses (another's model)" : "responses (fine-tuned)",
      json: { model: name, input: "Hello! Tell me about the sea.", store: false, max_output_tokens: 8, temperature: 0 },
    });
    note(r, this, answer);
    if (refusedAtGate(m, r, answer, true)) return;
    if (model !== "base") {
      const jobs = [...m.jobs.values()].filter((j) => j.outputModelId === model);
      const succeeded = !foreign && jobs.some((j) => j.seen.includes("JOB_STATE_SUCCEEDED"));
      const mayExist = !foreign && jobs.some((j) => !TERMINAL.has(j.seen.at(-1) as string));
      if (answer.code === "DEPLOYMENT_SCALING_UP" && (succeeded || mayExist)) return;
      if (!succeeded && !(mayExist && answer.status === 200)) return expectStatus(r, answer, 404, "MODEL_NOT_FOUND");
    }
    expectStatus(r, answer, 200);
    const usage = answer.body.usage as { input_tokens: number; output_tokens: number } | undefined;
    if (!usage) fail(r, "a response has its usage", answer);
    m.inferenceTokens.push(usage.input_tokens + usage.output_tokens);
  }
  toString = () => `infer(${this.model})`;
}

// ---------------------------------------------------------------------------
// Admin (server/admin/commands.ts over the shared store, as `npm run admin` runs it) and isolation
// ---------------------------------------------------------------------------

/** The reference hook for operator changes; the admin commands are only drawn when it is there. */
function adminHook(r: Real): NonNullable<Real["hooks"]["admin"]> {
  const hook = r.hooks.admin;
  if (!hook) throw new Error("an admin command without the admin hook");
  return hook;
}

class Suspend implements Command {
  readonly on: boolean;
  constructor(on: boolean) {
    this.on = on;
  }
  check = (m: Readonly<Model>) => m.suspended.value !== this.on;
  async run(m: Model, r: Real) {
    await adminHook(r).suspend(r.account, this.on);
    change(m.suspended, this.on);
    note(r, this, "done");
  }
  toString = () => (this.on ? "admin: suspend" : "admin: unsuspend");
}

class SetBalance implements Command {
  readonly zero: boolean;
  constructor(zero: boolean) {
    this.zero = zero;
  }
  check = (m: Readonly<Model>) => m.balanceZero.value !== this.zero;
  async run(m: Model, r: Real) {
    const micros = this.zero ? 0 : INITIAL_BALANCE_MICROS;
    const before = Date.now();
    await adminHook(r).setBalance(r.account, micros);
    m.balanceSets.push({ micros, before, after: Date.now() });
    change(m.balanceZero, this.zero);
    note(r, this, "done");
  }
  toString = () => `admin: balance set ${this.zero ? "0" : INITIAL_BALANCE_MICROS / 1e6}`;
}

class SetBudget implements Command {
  readonly zero: boolean;
  constructor(zero: boolean) {
    this.zero = zero;
  }
  check = (m: Readonly<Model>) => m.budgetZero.value !== this.zero;
  async run(m: Model, r: Real) {
    await adminHook(r).setBudgetZero(r.account, this.zero);
    change(m.budgetZero, this.zero);
    note(r, this, "done");
  }
  toString = () => `admin: limits set --budget ${this.zero ? "0.00" : "none"}`;
}

class RevokeKey implements Command {
  check = () => true;
  async run(m: Model, r: Real) {
    m.revokedKeys.push({ key: r.key, at: Date.now() });
    r.key = await adminHook(r).replaceKey(r.account);
    note(r, this, "done");
  }
  toString = () => "admin: keys revoke (and keys create)";
}

class UseRevokedKey implements Command {
  check = (m: Readonly<Model>) => m.revokedKeys.length > 0;
  async run(m: Model, r: Real) {
    r.rule = "auth.invalid-key";
    const revoked = m.revokedKeys.at(-1) as { key: string; at: number };
    const answer = await request(r, {
      method: "GET",
      path: `/accounts/${r.account}/datasets`,
      label: "datasets (revoked key)",
      key: revoked.key,
    });
    note(r, this, answer);
    if (answer.code === "INVALID_API_KEY") return expectStatus(r, answer, 401);
    if (Date.now() - revoked.at >= STALE_MS)
      fail(r, "a key revoked more than the staleness bound ago is 401 INVALID_API_KEY", answer);
  }
  toString = () => "list datasets with the revoked key";
}

class PeekAtOther implements Command {
  readonly datasetId: string;
  readonly index: number;
  constructor(datasetId: string, index: number) {
    this.datasetId = datasetId;
    this.index = index;
  }
  check = () => true;
  async run(m: Model, r: Real) {
    r.rule = "auth.account-scope";
    const other = r.others[this.index % r.others.length] as string;
    // Another account's path with our key: refused whatever exists there.
    const answer = await request(r, {
      method: "GET",
      path: `/accounts/${other}/datasets/${this.datasetId}`,
      label: "another account's dataset",
    });
    note(r, this, answer);
    const allowed = new Set<string>(
      [...possible(m.suspended)].map((s) => (s ? "TENANT_SUSPENDED" : "OPERATION_NOT_ALLOWED")),
    );
    if (!allowed.has(answer.code ?? "")) fail(r, `another account's path is ${[...allowed].join(" or ")}`, answer);
  }
  toString = () => `getDataset(another account #${this.index}, ${this.datasetId})`;
}

/** SIGKILL one process at this step and start it again; everything acknowledged must still be there. */
class Crash implements Command {
  readonly which: number;
  constructor(which: number) {
    this.which = which;
  }
  check = () => true;
  async run(m: Model, r: Real) {
    const crash = r.hooks.crash;
    if (!crash) throw new Error("a crash command without the crash hook");
    let what = "";
    await r.gate.alone(async () => {
      what = await crash(this.which);
    });
    note(r, this, what);
    r.rule = "states.job.start";
    for (const [id, d] of m.datasets) {
      const answer = await request(r, {
        method: "GET",
        path: `/accounts/${r.account}/datasets/${wireId(r, id)}?view=DATASET_VIEW_FULL`,
        label: "datasets/{d} (after a crash)",
      });
      if (answer.code !== undefined && gateOutcomes(m, false).has(answer.code)) continue;
      if (answer.status !== 200) fail(r, `dataset ${id}, acknowledged, is there after a kill -9`, answer);
      checkDatasetAnswer(r, d, answer);
    }
    for (const job of m.jobs.values()) {
      const answer = await request(r, {
        method: "GET",
        path: `/accounts/${r.account}/${COLLECTION[job.type]}/${job.jobId}`,
        label: `${COLLECTION[job.type]}/{job} (after a crash)`,
      });
      if (answer.code !== undefined && gateOutcomes(m, false).has(answer.code)) continue;
      if (answer.status !== 200) fail(r, `job ${job.jobId}, acknowledged, is there after a kill -9`, answer);
      observeJob(r, job, answer);
    }
  }
  toString = () => `kill -9 and restart process #${this.which}`;
}

/**
 * The whole path to a trainable dataset in one step (create, upload, validate, then look until
 * validation ends), each call checked as its own command is: random sequences of the single
 * steps rarely line up, and most of what is worth testing starts from a READY dataset.
 */
class PrepareDataset extends DatasetCommand implements Command {
  readonly content: Content;
  constructor(id: string, content: Content) {
    super(id);
    this.content = content;
  }
  async run(m: Model, r: Real) {
    await new CreateDataset(this.id).run(m, r);
    await new Upload(this.id, this.content).run(m, r);
    await new Validate(this.id).run(m, r);
    const look = new GetDataset(this.id);
    const deadline = Date.now() + r.pollMs;
    while (m.datasets.get(this.id)?.versions.at(-1)?.validation === "pending" && gateOutcomes(m, false).has("PASS")) {
      r.rule = "states.dataset.ready";
      if (Date.now() > deadline) fail(r, `the validation of ${this.id} did not end within ${r.pollMs / 1000} s`);
      await look.run(m, r);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  override toString = () => `prepareDataset(${this.id}, ${this.content})`;
}

/** Looks at a job until it ends (each look checked), so that later steps meet finished jobs and their models. */
class WaitForJob extends JobCommand implements Command {
  override check = (m: Readonly<Model>) => m.jobs.size > 0;
  async run(m: Model, r: Real) {
    const job = pickJob(m, this.index) as JobModel;
    const look = new GetJob(this.index, false);
    // Generous: one SQLite server trains every client's jobs one at a time, on its event loop, and a kill -9 costs a restart.
    const deadline = Date.now() + r.jobMs;
    while (!TERMINAL.has(job.seen.at(-1) as string) && gateOutcomes(m, false).has("PASS")) {
      if (Date.now() > deadline) {
        r.rule = "states.job.succeed";
        fail(r, `job ${job.jobId} did not end within ${r.jobMs / 1000} s (seen ${job.seen.join(" → ")})`);
      }
      await look.run(m, r);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  override toString = () => `waitForJob(#${this.index})`;
}

/**
 * Every command, weighted towards the lifecycle (a READY dataset, a job on it, waiting for it,
 * its model): fc.commands picks evenly among the arbitraries, so a weight is repeats.
 * `crashes` adds kill -9 at random steps.
 */
export function commandArbitraries(options: {
  crashes: boolean;
  /** The admin hook is there: suspend, balance, budget, revoked keys. */
  admin: boolean;
  /** The reference hook says the upload limit: uploads over it. */
  hugeUploads: boolean;
}): fc.Arbitrary<Command>[] {
  hugeUploads = options.hugeUploads;
  const dataset = fc.constantFrom(...DATASET_IDS);
  const output = fc.constantFrom(...OUTPUT_MODELS);
  const type = fc.constantFrom<JobType>("sft", "dpo");
  const index = fc.nat({ max: 7 });
  const key = fc.constantFrom(...IDEMPOTENCY_KEYS);
  const content = fc.constantFrom<Content | "huge">("sft", "sft", "dpo", "invalid", "megarow", "huge");
  const weighted: [number, fc.Arbitrary<Command>][] = [
    [
      4,
      fc
        .tuple(dataset, fc.constantFrom<Content>("sft", "sft", "sft", "dpo", "dpo", "megarow", "invalid"))
        .map(([id, c]) => new PrepareDataset(id, c)),
    ],
    [5, fc.tuple(type, output, key, fc.boolean()).map(([t, o, k, together]) => new CreateJob(t, "*", o, k, together))],
    [
      1,
      fc
        .tuple(type, dataset, output, key, fc.boolean())
        .map(([t, d, o, k, together]) => new CreateJob(t, d, o, k, together)),
    ],
    [3, index.map((i) => new WaitForJob(i))],
    [
      2,
      fc
        .constantFrom("*", "*", "base", ...OUTPUT_MODELS, ...OUTPUT_MODELS.map((o) => `foreign:${o}`))
        .map((model) => new Infer(model)),
    ],
    [2, index.map((i) => new CancelJob(i))],
    [1, fc.tuple(index, fc.boolean()).map(([i, wrong]) => new GetJob(i, wrong))],
    [1, index.map((i) => new Metrics(i))],
    [1, fc.tuple(type, fc.constantFrom(...DATASET_IDS, "*"), output).map(([t, d, o]) => new Estimate(t, d, o))],
    [1, dataset.map((id) => new CreateDataset(id))],
    [1, fc.tuple(dataset, content).map(([id, c]) => new Upload(id, c))],
    [1, dataset.map((id) => new Validate(id))],
    [1, dataset.map((id) => new GetDataset(id))],
    [1, dataset.map((id) => new DeleteDataset(id))],
    [1, fc.tuple(dataset, index).map(([d, i]) => new PeekAtOther(d, i))],
  ];
  if (options.admin)
    weighted.push(
      [1, fc.boolean().map((on) => new Suspend(on))],
      [1, fc.boolean().map((zero) => new SetBalance(zero))],
      [1, fc.boolean().map((zero) => new SetBudget(zero))],
      [1, fc.constant(new RevokeKey())],
      [1, fc.constant(new UseRevokedKey())],
    );
  if (options.crashes) weighted.push([1, fc.nat({ max: 2 }).map((i) => new Crash(i))]);
  return weighted.flatMap(([weight, arbitrary]) => Array.from({ length: weight }, () => arbitrary));
}
