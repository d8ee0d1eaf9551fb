/**
 * Faults that break the `states.*` rules of conformance/rules.yaml. States: a response's
 * status, a training job's and a dataset's transitions.
 */
import { objectAt, objectsOf, type JsonObject } from "../json.ts";
import { isOperation, JOB_OPERATIONS } from "../operations.ts";
import type { Fault } from "../proxy.ts";
import {
  postResponses,
  isStream,
  errorCode,
  replace,
  resend,
  completed,
  jobsOf,
  datasetsOf,
  versionsOf,
  isInt64String,
} from "./support.ts";

export const stateFaults: Fault[] = [
  {
    id: "responses.max-output-tokens-ignored",
    areas: ["responses"],
    transcripts: ["responses/incomplete"],
    rule: "states.response",
    description: "A response cut by max_output_tokens says status completed, without incomplete_details.",
    match: postResponses,
    onResponse(response) {
      const json = objectAt(response.json);
      if (isStream(response) || json?.status !== "incomplete") return;
      json.status = "completed";
      delete json.incomplete_details;
      return response;
    },
  },
  {
    id: "sse.incomplete-reported-completed",
    areas: ["events"],
    transcripts: ["events/stream-incomplete"],
    rule: "states.response",
    description:
      "In a stream cut by max_output_tokens, response.completed says status completed and drops incomplete_details.",
    match: postResponses,
    onResponse(response) {
      const final = response.events ? objectAt(completed(response.events)?.json, "response") : undefined;
      if (!final || final.status !== "incomplete") return;
      final.status = "completed";
      delete final.incomplete_details;
      return response;
    },
  },
  {
    id: "responses.cut-item-reported-completed",
    areas: ["responses"],
    transcripts: ["responses/incomplete"],
    rule: "states.response",
    description:
      "A response cut by max_output_tokens is incomplete, but the output item the ceiling cut still says status completed.",
    match: postResponses,
    onResponse(response) {
      const json = objectAt(response.json);
      if (isStream(response) || json?.status !== "incomplete") return;
      const cut = objectsOf(json.output).filter((item) => item.status === "incomplete");
      if (cut.length === 0) return;
      for (const item of cut) item.status = "completed";
      return response;
    },
  },
  {
    id: "jobs.create-not-queued",
    areas: ["finetune"],
    transcripts: ["limits/idempotency-key"],
    rule: "states.job.create",
    description: "The created job is reported RUNNING, with a startTime, in the create answer.",
    match: (request) => isOperation(request, ...JOB_OPERATIONS.create),
    onResponse(response) {
      const job = objectAt(response.json);
      if (response.status !== 201 || job?.state !== "JOB_STATE_QUEUED") return;
      job.state = "JOB_STATE_RUNNING";
      job.startTime = job.createTime;
      return response;
    },
  },
  {
    id: "jobs.cancel-invalid-state-200",
    areas: ["finetune"],
    transcripts: ["finetune/cancel-running-sft"],
    rule: "states.job.cancel-other",
    description: "Cancelling a finished job answers 200 with the (unchanged) job.",
    match: (request) => isOperation(request, ...JOB_OPERATIONS.cancel),
    async onResponse(response, request, ctx) {
      if (errorCode(response) !== "JOB_STATE_INVALID") return;
      const job = await resend(ctx, request, {
        method: "GET",
        path: request.path.replace(/:cancel$/, ""),
        body: Buffer.alloc(0),
        json: undefined,
      });
      if (job.status !== 200) return;
      return replace(response, 200, job.json);
    },
  },
  {
    id: "jobs.cancel-in-checkpointing-accepted",
    areas: ["finetune"],
    transcripts: ["finetune/cancel-checkpointing"],
    rule: "states.job.cancel-other",
    description:
      "A cancel that finds the job in CHECKPOINTING is accepted: it waits for the checkpoint to be saved, then cancels and answers 200 CANCELLED (the document allows a cancel from QUEUED or RUNNING only).",
    match: (request) => isOperation(request, ...JOB_OPERATIONS.cancel),
    async respond(request, ctx) {
      const jobPath = request.path.replace(/:cancel$/, "");
      const read = () => resend(ctx, request, { method: "GET", path: jobPath, body: Buffer.alloc(0), json: undefined });
      if (objectAt((await read()).json)?.state !== "JOB_STATE_CHECKPOINTING") return;
      ctx.hit();
      // Retried until the checkpoint is saved and the job is RUNNING again, which a cancel takes.
      for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
        const answer = await resend(ctx, request);
        if (errorCode(answer) !== "JOB_STATE_INVALID") return answer;
        const state = objectAt((await read()).json)?.state;
        if (state !== "JOB_STATE_CHECKPOINTING" && state !== "JOB_STATE_RUNNING") return answer;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      return undefined;
    },
  },
  {
    id: "jobs.stale-after-cancel",
    areas: ["finetune"],
    transcripts: ["finetune/cancel-running"],
    rule: "states.job.cancel-running",
    description:
      "A stale read cache: after a successful cancel, GET still returns the job as it was before the cancel.",
    match: (request) => isOperation(request, ...JOB_OPERATIONS.cancel) || isOperation(request, ...JOB_OPERATIONS.get),
    async onRequest(request, ctx) {
      if (request.method !== "POST") return;
      const before = await resend(ctx, request, {
        method: "GET",
        path: request.path.replace(/:cancel$/, ""),
        body: Buffer.alloc(0),
        json: undefined,
      });
      if (before.status === 200) ctx.state.set(`pending:${request.path.replace(/:cancel$/, "")}`, before.json);
    },
    onResponse(response, request, ctx) {
      if (request.method === "POST") {
        const path = request.path.replace(/:cancel$/, "");
        if (response.status === 200) ctx.state.set(`stale:${path}`, ctx.state.get(`pending:${path}`));
        return;
      }
      const stale = ctx.state.get(`stale:${request.path}`);
      if (response.status !== 200 || stale === undefined) return;
      return replace(response, 200, stale);
    },
  },
  {
    id: "jobs.stuck-queued",
    areas: ["finetune"],
    transcripts: ["finetune/cancel-running"],
    rule: "states.job.start",
    description: "Reads of a job always show it QUEUED: the state is never updated.",
    match: (request) => isOperation(request, ...JOB_OPERATIONS.get),
    onResponse(response) {
      const job = objectAt(response.json);
      if (
        response.status !== 200 ||
        !job?.state ||
        job.state === "JOB_STATE_QUEUED" ||
        job.state === "JOB_STATE_CANCELLED"
      )
        return;
      job.state = "JOB_STATE_QUEUED";
      for (const field of ["startTime", "completeTime", "outputModel", "stateDetail", "errorClass"]) delete job[field];
      job.progress = { ...objectAt(job, "progress"), percent: 0, epoch: 0, processedTokens: "0" };
      return response;
    },
  },
  {
    id: "jobs.succeeded-without-output-model",
    areas: ["finetune"],
    transcripts: ["finetune/dpo"],
    rule: "states.job.succeed",
    description: "A SUCCEEDED job does not name its outputModel.",
    onResponse(response) {
      const jobs = jobsOf(response).filter(
        (job) => job.state === "JOB_STATE_SUCCEEDED" && job.outputModel !== undefined,
      );
      if (jobs.length === 0) return;
      for (const job of jobs) delete job.outputModel;
      return response;
    },
  },
  {
    id: "jobs.started-without-start-time",
    areas: ["finetune"],
    transcripts: ["finetune/cancel-running"],
    rule: "states.job.start",
    description: "Jobs past QUEUED never get a startTime.",
    onResponse(response) {
      const jobs = jobsOf(response).filter((job) => job.startTime !== undefined);
      if (jobs.length === 0) return;
      for (const job of jobs) delete job.startTime;
      return response;
    },
  },
  {
    id: "jobs.succeeded-without-complete-time",
    areas: ["finetune"],
    transcripts: ["finetune/cancel-succeeded"],
    rule: "states.job.succeed",
    description: "SUCCEEDED jobs lack completeTime.",
    onResponse(response) {
      const jobs = jobsOf(response).filter(
        (job) => job.state === "JOB_STATE_SUCCEEDED" && job.completeTime !== undefined,
      );
      if (jobs.length === 0) return;
      for (const job of jobs) delete job.completeTime;
      return response;
    },
  },
  {
    id: "datasets.bad-line-accepted",
    areas: ["datasets"],
    transcripts: ["datasets/validation-failed"],
    rule: "states.dataset.failed",
    description: "Validation never fails: a dataset with a bad line ends READY (every line counted valid).",
    onResponse(response) {
      let changed = false;
      const fix = (version: JsonObject) => {
        if (version.state !== "DATASET_VERSION_STATE_FAILED") return;
        version.state = "DATASET_VERSION_STATE_READY";
        const validation = objectAt(version, "validation");
        if (validation) {
          validation.validLines = validation.totalLines;
          delete validation.firstInvalidLine;
        }
        changed = true;
      };
      for (const dataset of datasetsOf(response))
        if (dataset.state === "DATASET_STATE_FAILED") {
          dataset.state = "DATASET_STATE_READY";
          changed = true;
        }
      for (const version of versionsOf(response)) fix(version);
      return changed ? response : undefined;
    },
  },
  {
    id: "datasets.first-bad-line-missing",
    areas: ["datasets"],
    transcripts: ["datasets/validation-failed"],
    rule: "states.dataset.failed",
    description: "A failed version's validation does not report the first bad line.",
    onResponse(response) {
      const failed = objectsOf(versionsOf(response).map((version) => version.validation)).filter(
        (validation) => validation.firstInvalidLine !== undefined,
      );
      if (failed.length === 0) return;
      for (const validation of failed) delete validation.firstInvalidLine;
      return response;
    },
  },
  {
    id: "datasets.trailing-newline-counted",
    areas: ["datasets"],
    transcripts: ["datasets/lifecycle"],
    rule: "states.dataset.ready",
    description: "Validated versions count one line more than the file has (the trailing newline).",
    onResponse(response) {
      const ready = versionsOf(response).flatMap((version) => {
        const validation = objectAt(version, "validation");
        const counted =
          version.state === "DATASET_VERSION_STATE_READY" &&
          isInt64String(version.exampleCount) &&
          isInt64String(validation?.totalLines);
        return counted && validation ? [{ version, validation }] : [];
      });
      if (ready.length === 0) return;
      for (const { version, validation } of ready) {
        version.exampleCount = String(Number(version.exampleCount) + 1);
        validation.totalLines = String(Number(validation.totalLines) + 1);
        validation.validLines = validation.totalLines;
      }
      return response;
    },
  },
];
