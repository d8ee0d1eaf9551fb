/**
 * `datasets create|upload|validate|get|list|delete`.
 *
 * `upload` streams the file from disk with a progress bar (bytes and rate), then starts
 * validation and waits for it: the counts when the version is READY, the first bad line
 * with its number and reason when it FAILED (exit 8).
 */
import { createReadStream, statSync } from "node:fs";
import path from "node:path";
import { Readable, Transform } from "node:stream";
import { Command, Option } from "commander";
import cliProgress from "cli-progress";
import { waiting } from "../waiting.ts";
import {
  ApiError,
  APIUserAbortError,
  ok,
  paginate,
  parseDatasetName,
  uploadDataset,
  waitForDataset,
  type Dataset,
  type DatasetVersion,
} from "../../client/index.ts";
import { act, seconds } from "../command.ts";
import type { Context } from "../context.ts";
import { CliError, EXIT, usageError } from "../errors.ts";
import { bytes, count, fields, state, table, time } from "../format.ts";

/** `pirate` or `accounts/acme/datasets/pirate` (a version suffix is dropped). */
export function datasetRef(ctx: Context, value: string): { account: string; dataset: string } {
  const full = parseDatasetName(value);
  if (full) return { account: full.account, dataset: full.dataset };
  if (!/^[a-z0-9-]{1,64}$/.test(value))
    throw usageError(`not a dataset id or name: ${value}`, [
      "ids are lowercase letters, digits and -, at most 64 characters",
    ]);
  return { account: ctx.account, dataset: value };
}

/** `line 6: "messages" must not be empty` (the service's reason may already name the line; it is said once). */
export function badLine(bad: { lineNumber: string; reason: string }): string {
  return `line ${bad.lineNumber}: ${bad.reason.replace(new RegExp(`^line ${bad.lineNumber}:\\s*`, "i"), "")}`;
}

function printDataset(ctx: Context, dataset: Dataset): void {
  ctx.print(
    fields([
      ["name", dataset.name],
      ["display name", dataset.displayName || "-"],
      ["state", state(dataset.state)],
      ["source", state(dataset.source)],
      ["versions", String(dataset.latestVersionNo)],
      ["total size", bytes(dataset.totalBytes)],
      ["created", time(dataset.createTime)],
      ["updated", time(dataset.updateTime)],
    ]),
  );
  if (dataset.versions?.length) {
    ctx.print();
    ctx.print(
      table([
        ["VERSION", "STATE", "FORMAT", "ROWS", "TOKENS", "SIZE", "UPLOADED", "FIRST BAD LINE"],
        ...dataset.versions.map((v) => [
          String(v.versionNo),
          state(v.state),
          v.format ?? "-",
          count(v.exampleCount),
          count(v.estimatedTokenCount),
          bytes(v.bytes),
          time(v.createTime),
          v.validation.firstInvalidLine ? badLine(v.validation.firstInvalidLine) : (v.validation.failureReason ?? "-"),
        ]),
      ]),
    );
  }
  if (dataset.jobs?.length) {
    ctx.print();
    ctx.print(
      table([["USED BY JOB", "TYPE", "STATE"], ...dataset.jobs.map((j) => [j.name, state(j.jobType), state(j.state)])]),
    );
  }
}

/** Starts validation of the latest version, waits, and reports; exit 8 when it failed. */
async function validateAndReport(
  ctx: Context,
  target: { account: string; dataset: string },
  options: { wait?: boolean; timeout?: number },
): Promise<void> {
  const client = ctx.client;
  const started = await ok(
    client.POST("/accounts/{account}/datasets/{dataset}:validateUpload", { params: { path: target }, body: {} }),
  );
  if (options.wait === false) {
    if (ctx.json) ctx.printJson(started);
    else
      ctx.print(
        `Validation of ${started.name} (version ${started.latestVersionNo}) started; see it with: ${ctx.invocation} datasets get ${target.dataset}`,
      );
    return;
  }
  const progress = waiting(ctx, `Validating version ${started.latestVersionNo}`);
  const ready = await waitForDataset(client, started, {
    timeoutMs: options.timeout ?? 10 * 60_000,
    intervalMs: 250,
  }).finally(() => progress.done());
  const version = await ok(
    client.GET("/accounts/{account}/datasets/{dataset}/versions/{version}", {
      params: { path: { ...target, version: ready.latestVersionNo } },
    }),
  );
  reportValidation(ctx, ready, version);
}

function reportValidation(ctx: Context, dataset: Dataset, version: DatasetVersion): void {
  if (ctx.json) ctx.printJson({ dataset, version });
  const bad = version.validation.firstInvalidLine;
  if (dataset.state === "DATASET_STATE_READY" && version.state === "DATASET_VERSION_STATE_READY") {
    if (!ctx.json) {
      ctx.print(
        `${ctx.style("green", "Ready")}: ${count(version.validation.totalLines)} lines, ${count(version.exampleCount)} valid rows, ` +
          `${count(version.estimatedTokenCount)} tokens, format ${version.format ?? "-"}`,
      );
      ctx.print(`Version: ${version.name}`);
    }
    return;
  }
  if (bad) {
    throw new CliError(`validation failed at ${badLine(bad)}`, EXIT.FAILED, [
      `${count(version.validation.validLines)} of ${count(version.validation.totalLines)} lines valid; fix line ${bad.lineNumber} of the file and upload it again`,
    ]);
  }
  if (version.validation.failureReason !== undefined)
    throw new CliError(`validation failed: ${version.validation.failureReason}`, EXIT.FAILED);
  throw new CliError(
    `dataset ${dataset.name} is ${state(dataset.state)} (version ${version.versionNo} ${state(version.state)})`,
    EXIT.FAILED,
  );
}

/** The file as a web stream that counts what has been read from it (what fetch has taken to send). */
function countingStream(file: string, onBytes: (total: number) => void): ReadableStream<Uint8Array> {
  let total = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      total += chunk.length;
      onBytes(total);
      callback(null, chunk);
    },
  });
  const source = createReadStream(file, { highWaterMark: 256 * 1024 });
  source.on("error", (error) => counter.destroy(error));
  return Readable.toWeb(source.pipe(counter)) as unknown as ReadableStream<Uint8Array>;
}

/** `1.2 MiB/s` */
function rate(done: number, startedAt: number): string {
  const elapsed = (performance.now() - startedAt) / 1000;
  return elapsed > 0 ? `${bytes(Math.round(done / elapsed))}/s` : "-";
}

async function upload(
  ctx: Context,
  target: { account: string; dataset: string },
  file: string,
): Promise<DatasetVersion> {
  let size: number;
  try {
    size = statSync(file).size;
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${(error as Error).message}`, EXIT.ERROR, [], { cause: error });
  }
  const name = path.basename(file);
  const startedAt = performance.now();
  let bar: cliProgress.SingleBar | undefined;
  let last = 0;
  if (ctx.live) {
    bar = new cliProgress.SingleBar(
      {
        stream: ctx.io.stderr,
        format: `Uploading ${name} [{bar}] {percentage}% | {sent} / {size} | {rate} | ETA {eta_formatted}`,
        barCompleteChar: "█",
        barIncompleteChar: "░",
        barsize: 30,
        hideCursor: true,
        // Shows the cursor again on Ctrl-C.
        gracefulExit: true,
        etaBuffer: 20,
        fps: 10,
      },
      cliProgress.Presets.shades_classic,
    );
    bar.start(size, 0, { sent: bytes(0), size: bytes(size), rate: "-" });
  }
  const body = countingStream(file, (done) => {
    last = done;
    bar?.update(done, { sent: bytes(done), size: bytes(size), rate: rate(done, startedAt) });
  });
  try {
    const version = await uploadDataset(ctx.client, target, body);
    bar?.update(size, { sent: bytes(size), size: bytes(size), rate: rate(size, startedAt) });
    bar?.stop();
    ctx.note(
      `Uploaded ${name} as version ${version.versionNo} of ${target.dataset}: ${bytes(size)} in ${((performance.now() - startedAt) / 1000).toFixed(1)} s (${rate(size, startedAt)})`,
    );
    return version;
  } catch (error) {
    bar?.stop();
    // An answer, or Ctrl-C, is reported as such; a connection lost part-way says how far it got.
    if (error instanceof ApiError || error instanceof APIUserAbortError) throw error;
    throw new CliError(`upload failed after ${bytes(last)}: ${(error as Error).message}`, EXIT.UNAVAILABLE, [], {
      cause: error,
    });
  }
}

async function datasetExists(ctx: Context, target: { account: string; dataset: string }): Promise<boolean> {
  try {
    await ok(ctx.client.GET("/accounts/{account}/datasets/{dataset}", { params: { path: target } }));
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return false;
    throw error;
  }
}

/** Creates the dataset, with a display name when one is given. */
function createDataset(
  ctx: Context,
  target: { account: string; dataset: string },
  displayName: string | undefined,
): Promise<Dataset> {
  return ok(
    ctx.client.POST("/accounts/{account}/datasets", {
      params: { path: { account: target.account } },
      body: { datasetId: target.dataset, dataset: displayName === undefined ? {} : { displayName } },
    }),
  );
}

export function datasetsCommand(): Command {
  const datasets = new Command("datasets").description(
    "Create, upload, validate, inspect and delete training datasets (JSONL files).",
  );

  datasets
    .command("create")
    .description("Create an empty dataset; upload its rows with `datasets upload`.")
    .argument("<id>", "the new dataset's id: lowercase letters, digits and -, at most 64 characters")
    .option("--display-name <text>", "a name for people")
    .action(
      act<[string], { displayName?: string }>(async (ctx, options, id) => {
        const target = datasetRef(ctx, id);
        const dataset = await createDataset(ctx, target, options.displayName);
        if (ctx.json) return ctx.printJson(dataset);
        ctx.print(`Created ${dataset.name} (${state(dataset.state)})`);
        ctx.print(`Next: ${ctx.invocation} datasets upload ${target.dataset} <file.jsonl>`);
      }),
    );

  datasets
    .command("upload")
    .description(
      "Upload a JSONL file as a new version (streamed from disk, with a progress bar), then validate it and wait: prints the counts, or the first bad line with its number and reason (exit 8).",
    )
    .argument("<id>", "the dataset id (or its full name)")
    .argument("<file>", "the JSONL file: one training row per line")
    .option("--create", "create the dataset first when it does not exist")
    .option("--display-name <text>", "with --create: a name for people")
    .option("--no-validate", "only upload; validate later with `datasets validate`")
    .option("--no-wait", "start validation but do not wait for it")
    .option("--timeout <seconds>", "how long to wait for validation (default 600)", seconds)
    .action(
      act<
        [string, string],
        { create?: boolean; displayName?: string; validate: boolean; wait: boolean; timeout?: number }
      >(async (ctx, options, id, file) => {
        const target = datasetRef(ctx, id);
        if (options.create && !(await datasetExists(ctx, target))) {
          const created = await createDataset(ctx, target, options.displayName);
          ctx.note(`Created ${created.name}`);
        }
        const version = await upload(ctx, target, file);
        if (!options.validate) {
          if (ctx.json) ctx.printJson(version);
          else
            ctx.print(
              `Version: ${version.name} (not validated; run: ${ctx.invocation} datasets validate ${target.dataset})`,
            );
          return;
        }
        await validateAndReport(ctx, target, options);
      }),
    );

  datasets
    .command("validate")
    .description("Validate the latest uploaded version and wait: prints the counts, or the first bad line (exit 8).")
    .argument("<id>", "the dataset id (or its full name)")
    .option("--no-wait", "start validation but do not wait for it")
    .option("--timeout <seconds>", "how long to wait (default 600)", seconds)
    .action(
      act<[string], { wait: boolean; timeout?: number }>(async (ctx, options, id) => {
        await validateAndReport(ctx, datasetRef(ctx, id), options);
      }),
    );

  datasets
    .command("get")
    .description("Show a dataset with its versions (rows, tokens, format, first bad line) and the jobs that used it.")
    .argument("<id>", "the dataset id (or its full name)")
    .action(
      act<[string], object>(async (ctx, _options, id) => {
        const dataset = await ok(
          ctx.client.GET("/accounts/{account}/datasets/{dataset}", {
            params: { path: datasetRef(ctx, id), query: { view: "DATASET_VIEW_FULL" } },
          }),
        );
        if (ctx.json) return ctx.printJson(dataset);
        printDataset(ctx, dataset);
      }),
    );

  datasets
    .command("list")
    .description("List the account's datasets, newest first (every page).")
    .addOption(
      new Option("--state <state>", "only datasets in this state").choices([
        "CREATING",
        "UPLOADING",
        "VALIDATING",
        "READY",
        "FAILED",
        "DELETED",
      ]),
    )
    .action(
      act<[], { state?: string }>(async (ctx, options) => {
        const all: Dataset[] = [];
        for await (const d of paginate(ctx.client, "/accounts/{account}/datasets", {
          params: {
            path: { account: ctx.account },
            query: { pageSize: 200, ...(options.state ? { filter: `state:${options.state}` } : {}) },
          },
        })) {
          all.push(d);
        }
        if (ctx.json) return ctx.printJson(all);
        if (all.length === 0) return ctx.print("No datasets.");
        ctx.print(
          table([
            ["ID", "STATE", "VERSIONS", "SIZE", "UPDATED", "DISPLAY NAME"],
            ...all.map((d) => [
              d.datasetId,
              state(d.state),
              String(d.latestVersionNo),
              bytes(d.totalBytes),
              time(d.updateTime),
              d.displayName || "-",
            ]),
          ]),
        );
      }),
    );

  datasets
    .command("delete")
    .description(
      "Delete a dataset (it can no longer be trained on; jobs that used it keep their record). Asks first unless --yes.",
    )
    .argument("<id>", "the dataset id (or its full name)")
    .option("-y, --yes", "do not ask")
    .action(
      act<[string], { yes?: boolean }>(async (ctx, options, id) => {
        const target = datasetRef(ctx, id);
        await ctx.confirm(`Delete dataset ${target.dataset}?`, options.yes);
        const dataset = await ok(
          ctx.client.DELETE("/accounts/{account}/datasets/{dataset}", { params: { path: target } }),
        );
        if (ctx.json) return ctx.printJson(dataset);
        ctx.print(`Deleted ${dataset.name} (${state(dataset.state)})`);
      }),
    );

  return datasets;
}
