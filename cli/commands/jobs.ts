/**
 * `jobs estimate|create|list|get|cancel|watch|metrics`, for supervised (SFT) and
 * preference (DPO) jobs.
 *
 * `create` prints the estimate's working first and asks before a billable run unless
 * `--yes`; `watch` follows a job with a progress bar and a live loss curve and ends with
 * the output model's name; `metrics --plot` writes the loss curves as an SVG or PNG chart.
 */
import { Command, Option } from "commander";
import {
  ApiError,
  PLATFORM_ACCOUNT,
  datasetVersionName,
  parseDatasetName,
  parseResourceName,
  resourceName,
  type JobType,
  type Schema,
  type TrainingJob,
  type TrainingJobRequest,
} from "../../client/index.ts";
import { enums } from "../../generated/contract-values.ts";
import { act, decimal, integer, seconds } from "../command.ts";
import type { Context } from "../context.ts";
import { CliError, EXIT, usageError } from "../errors.ts";
import { count, fields, money, state, table, time } from "../format.ts";
import { jobAt, jobCollection, otherJobType, type CostEstimate, type Curve } from "../job-collections.ts";
import { getCurve, getJob, watchJob } from "../watch.ts";
import { createdJobs, rememberJob } from "../created-jobs.ts";
import { waiting } from "../waiting.ts";

interface TypeOptions {
  dpo?: boolean;
  type?: "sft" | "dpo";
}

interface TrainingOptions extends TypeOptions {
  baseModel: string;
  dataset: string;
  outputModel: string;
  evalDataset?: string;
  evalSplit?: string;
  epochs?: number;
  loraRank?: number;
  learningRate?: string;
  batchSize?: number;
  maxContextLength?: number;
  lrSchedule?: Schema<"LrSchedule">;
  warmupSteps?: number;
  earlyStop?: boolean;
  dpoBeta?: string;
}

/** The job type the options ask for, or undefined when they do not say. */
function typeOf(options: TypeOptions): JobType | undefined {
  if (options.dpo && options.type === "sft") throw usageError("--dpo and --type sft contradict each other");
  if (options.dpo || options.type === "dpo") return "JOB_TYPE_DPO";
  if (options.type === "sft") return "JOB_TYPE_SFT";
  return undefined;
}

function addTypeOptions(command: Command, what: string): Command {
  return command
    .option("--dpo", `${what} a preference (DPO) job; the same as --type dpo`)
    .addOption(new Option("--type <type>", `${what} this kind of job`).choices(["sft", "dpo"]));
}

/** A dataset id, name or version name → the name the job request takes. */
function datasetName(ctx: Context, value: string): string {
  if (parseDatasetName(value)) return value;
  const pinned = /^([a-z0-9-]{1,64})@([1-9]\d*)$/.exec(value);
  if (pinned) return datasetVersionName(ctx.account, pinned[1] as string, pinned[2] as string);
  if (/^[a-z0-9-]{1,64}$/.test(value)) return resourceName(ctx.account, "datasets", value);
  throw usageError(`not a dataset: ${value}`, [
    "give its id (pirate), id@version (pirate@2), or full name (accounts/acme/datasets/pirate/versions/2)",
  ]);
}

/** The example of a base model's full name in help texts: accounts/maas/models/tiny-chat. */
const PLATFORM_MODEL_EXAMPLE = resourceName(PLATFORM_ACCOUNT, "models", "tiny-chat");

/** A base model id (tiny-chat) or full name → the full resource name baseModel takes (accounts/maas/models/tiny-chat). */
function baseModelName(value: string): string {
  if (parseResourceName(value, "models")?.account === PLATFORM_ACCOUNT) return value;
  if (/^[^/]+$/.test(value)) return resourceName(PLATFORM_ACCOUNT, "models", value);
  throw usageError(`not a base model: ${value}`, [`give its id (tiny-chat) or full name (${PLATFORM_MODEL_EXAMPLE})`]);
}

function addTrainingOptions(command: Command): Command {
  return addTypeOptions(command, "for")
    .requiredOption(
      "--base-model <model>",
      `the model to tune: its id (tiny-chat) or full name (${PLATFORM_MODEL_EXAMPLE})`,
    )
    .requiredOption("--dataset <dataset>", "the training data: id (latest version), id@version, or full name")
    .requiredOption("--output-model <id>", "id of the model the job creates (accounts/{account}/models/{id})")
    .option("--eval-dataset <dataset>", "held-out evaluation data, named like --dataset")
    .option(
      "--eval-split <percent>",
      "hold this percent of the rows of --dataset out for evaluation (0.01 to 99.99); the job saves them as a new dataset of your account, <job id>-eval (default: no evaluation)",
      decimal,
    )
    .option(
      "--epochs <n>",
      "passes over the data, 1 to 100 (default: chosen by the base model for at least 80 optimisation steps, shown by jobs estimate)",
      integer(1, 100),
    )
    .option(
      "--lora-rank <n>",
      "rank of the LoRA adapter, 1 to 256 (default: chosen by the base model, shown by jobs get)",
      integer(1, 256),
    )
    .option(
      "--learning-rate <rate>",
      "learning rate, such as 1e-4 (default: chosen by the base model, shown by jobs get)",
      decimal,
    )
    .option("--batch-size <n>", "examples per step (default: chosen by the base model, shown by jobs get)", integer(1))
    .option(
      "--max-context-length <tokens>",
      "longer examples are skipped (default: chosen by the base model, shown by jobs get)",
      integer(1),
    )
    .addOption(
      new Option(
        "--lr-schedule <schedule>",
        "how the learning rate changes (default: chosen by the service, shown by jobs get)",
      ).choices(enums.LrSchedule),
    )
    .option(
      "--warmup-steps <n>",
      "steps of linear warm-up (default: chosen by the service, shown by jobs get)",
      integer(0),
    )
    .option("--early-stop", "stop when the evaluation loss stops improving")
    .option(
      "--dpo-beta <beta>",
      "DPO's beta (DPO jobs only; default: chosen by the service, shown by jobs get)",
      decimal,
    );
}

/** --eval-split's percent as the basis points the config takes (0.01 % → 1), if given. */
function evalSplitBasisPoints(evalSplit: string | undefined): number | undefined {
  if (evalSplit === undefined) return undefined;
  const basisPoints = Math.round(Number(evalSplit) * 100);
  if (basisPoints < 1 || basisPoints > 9999)
    throw usageError(`--eval-split must be between 0.01 and 99.99 percent, not ${evalSplit}`);
  return basisPoints;
}

/** The request's config: the output model id and every setting the options give. */
function trainingConfig(options: TrainingOptions): TrainingJobRequest["config"] {
  const basisPoints = evalSplitBasisPoints(options.evalSplit);
  const config: TrainingJobRequest["config"] = { outputModelId: options.outputModel };
  if (options.epochs !== undefined) config.epochs = options.epochs;
  if (options.loraRank !== undefined) config.loraRank = options.loraRank;
  if (options.learningRate !== undefined) config.learningRate = options.learningRate;
  if (options.batchSize !== undefined) config.batchSize = options.batchSize;
  if (options.maxContextLength !== undefined) config.maxContextLength = options.maxContextLength;
  if (options.lrSchedule !== undefined) config.lrSchedule = options.lrSchedule;
  if (options.warmupSteps !== undefined) config.warmupSteps = options.warmupSteps;
  if (options.earlyStop) config.earlyStop = true;
  if (basisPoints !== undefined) config.evalAutoCarveoutBasisPoints = basisPoints;
  if (options.dpoBeta !== undefined) config.dpoBeta = options.dpoBeta;
  return config;
}

/** The request body the options describe (the same for the estimate and the create). */
function jobRequest(ctx: Context, options: TrainingOptions): { type: JobType; body: TrainingJobRequest } {
  const type = typeOf(options) ?? "JOB_TYPE_SFT";
  if (options.dpoBeta !== undefined && type !== "JOB_TYPE_DPO")
    throw usageError("--dpo-beta is for preference jobs: add --dpo");
  const body: TrainingJobRequest = {
    baseModel: baseModelName(options.baseModel),
    inputDatasetVersion: datasetName(ctx, options.dataset),
    config: trainingConfig(options),
  };
  if (options.evalDataset !== undefined) body.evaluationDatasetVersion = datasetName(ctx, options.evalDataset);
  return { type, body };
}

/** The estimate with its working, for people. */
function estimateText(type: JobType, body: TrainingJobRequest, result: CostEstimate): string {
  const e = result.estimate;
  const g = result.egress;
  const allowed = g.allowed
    ? `yes (${g.execution.thirdParty ? "third-party trainer" : "trained by the service"}${g.requiredAgreementVersion ? `, agreement ${g.requiredAgreementVersion} accepted` : ""})`
    : `no: needs agreement ${g.requiredAgreementVersion || "(none named)"}, accepted: ${g.acceptedAgreementVersion || "none"}${g.providerApproved ? "" : "; provider not approved"}`;
  return [
    `Cost estimate (${jobCollection(type).label}): ${body.baseModel} on ${body.inputDatasetVersion}`,
    fields([
      ["  examples", count(e.exampleCount)],
      ["  skipped (too long)", `${count(e.examplesSkipped)}   (longer than maxContextLength: not trained, not billed)`],
      ["  avg tokens / example", count(e.avgTokensPerExample)],
      ["  epochs", String(e.epochs)],
      [
        "  tokens processed",
        `${count(e.tokensProcessed)}   (tokens of the examples that fit × ${e.epochs} epoch${e.epochs === 1 ? "" : "s"})`,
      ],
      ["  rate", `${money(e.ratePerMillion)} per million tokens`],
      [
        "  estimated cost",
        `${money(e.estimatedCost)}   (= ${count(e.tokensProcessed)} × ${e.ratePerMillion.amount} / 1,000,000)`,
      ],
      ...(body.config.evalAutoCarveoutBasisPoints
        ? [
            [
              "  evaluation",
              `${body.config.evalAutoCarveoutBasisPoints / 100} % of the rows held out (not trained on), saved as a new dataset <job id>-eval`,
            ] as [string, string],
          ]
        : []),
      ["  allowed", allowed],
    ]),
    "  An estimate, not the bill: billing is for the tokens actually trained.",
  ].join("\n");
}

/** The account's jobs (of the type, when given; in a state, when given), newest first. */
async function listJobs(ctx: Context, type: JobType | undefined, filter?: string): Promise<TrainingJob[]> {
  const all: TrainingJob[] = [];
  for (const listed of type ? [type] : enums.JobType)
    for await (const j of jobCollection(listed).list(ctx.client, ctx.account, filter)) all.push(j);
  return all.sort((a, b) => b.createTime.localeCompare(a.createTime));
}

/** States in which a job has certainly trained no step yet. */
const NO_STEPS_YET: ReadonlySet<string> = new Set(["JOB_STATE_QUEUED", "JOB_STATE_EXPIRED"]);

/**
 * `latest`: the newest job created with this tool (cli/created-jobs.ts) against this service
 * and account that still exists, of the type when given; with `withSteps` the newest of
 * those that has training steps. Before the tool has created any, the account's newest job
 * (with steps), which may be one that another program made. Says on stderr which job it
 * picked and why.
 */
async function latestJob(ctx: Context, type: JobType | undefined, withSteps = false): Promise<TrainingJob> {
  const kind = type ? `${jobCollection(type).label} ` : "";
  const created = createdJobs(ctx.io.env, ctx.baseUrl, ctx.account).filter((j) => !type || j.jobType === type);
  const jobs: TrainingJob[] = [];
  for (const remembered of created) {
    const job = await getJob(ctx.client, remembered).catch((error: unknown) => {
      if (error instanceof ApiError && error.status === 404) return undefined;
      throw error;
    });
    if (job) jobs.push(job);
  }
  const mine = jobs.length > 0;
  if (!mine) jobs.push(...(await listJobs(ctx, type)));
  if (jobs.length === 0) throw new CliError(`account ${ctx.account} has no ${kind}jobs yet`, EXIT.NOT_FOUND);
  const whose = (steps: string) =>
    mine
      ? `the newest you created with this tool${steps}`
      : `the account's newest${steps} (none created with this tool here)`;
  const describe = (job: TrainingJob) =>
    `latest: job ${job.jobId} (${state(job.jobType)}, ${state(job.state)}, created ${time(job.createTime)})`;
  if (!withSteps) {
    const newest = jobs[0] as TrainingJob;
    ctx.note(`${describe(newest)}, ${whose("")}`);
    return newest;
  }
  const skipped: string[] = [];
  for (const job of jobs) {
    if (!NO_STEPS_YET.has(job.state) && (await getCurve(ctx.client, job, 0)).totalPoints !== "0") {
      ctx.note(
        `${describe(job)}, ${whose(" that has training steps")}${skipped.length ? `; newer without steps: ${skipped.join(", ")}` : ""}`,
      );
      return job;
    }
    skipped.push(job.jobId);
  }
  throw new CliError(
    `none of the ${jobs.length} ${kind}jobs ${mine ? "created with this tool" : `of account ${ctx.account}`} has training steps yet`,
    EXIT.NOT_FOUND,
  );
}

/**
 * A job by id (sft-…, dpo-…), by name (accounts/acme/trainingJobs/…), or `latest` (the
 * newest, or the newest with training steps); of the type given, or found by trying both
 * collections.
 */
async function findJob(
  ctx: Context,
  ref: string,
  type: JobType | undefined,
  latest: { withSteps?: boolean } = {},
): Promise<TrainingJob> {
  if (ref === "latest") return latestJob(ctx, type, latest.withSteps === true);
  const named = parseResourceName(ref, "trainingJobs");
  const jobId = named ? named.id : ref;
  const name = resourceName(named ? named.account : ctx.account, "trainingJobs", jobId);
  if (type) return getJob(ctx.client, { name, jobId, jobType: type });
  const first: JobType = jobId.startsWith("dpo-") ? "JOB_TYPE_DPO" : "JOB_TYPE_SFT";
  try {
    return await getJob(ctx.client, { name, jobId, jobType: first });
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 404)) throw error;
    try {
      return await getJob(ctx.client, { name, jobId, jobType: otherJobType(first) });
    } catch (second) {
      // The first 404 speaks of the collection the id most likely belongs to.
      if (second instanceof ApiError && second.status === 404) throw error;
      throw second;
    }
  }
}

function printJob(ctx: Context, job: TrainingJob): void {
  const c = job.config;
  const pairs: [string, string][] = [
    ["job", `${job.jobId} (${state(job.jobType)})`],
    [
      "state",
      state(job.state) +
        (job.stateDetail ? `: ${job.stateDetail}` : "") +
        (job.errorClass ? ` [${job.errorClass}]` : ""),
    ],
    [
      "progress",
      `${job.progress.percent}%, epoch ${job.progress.epoch}/${job.progress.totalEpochs}, ${count(job.progress.processedTokens)} tokens`,
    ],
    ["base model", job.baseModel],
    ["training data", job.inputDatasetVersion],
    ["evaluation data", job.evaluationDatasetVersion ?? "-"],
    [
      "output model",
      job.outputModel ?? `(when it succeeds) ${resourceName(jobAt(job).account, "models", c.outputModelId)}`,
    ],
    [
      "config",
      `epochs ${c.epochs}, loraRank ${c.loraRank}, learningRate ${c.learningRate}, batchSize ${c.batchSize}, maxContextLength ${c.maxContextLength}, ` +
        `lrSchedule ${c.lrSchedule}, warmupSteps ${c.warmupSteps}, earlyStop ${c.earlyStop}, evalSplit ${c.evalAutoCarveoutBasisPoints / 100}%` +
        (c.dpoBeta !== undefined ? `, dpoBeta ${c.dpoBeta}` : ""),
    ],
    [
      "examples",
      `${count(job.execution.examplesTrained)} trained, ${count(job.execution.examplesSkipped)} skipped, ${count(job.execution.evalExamples)} for evaluation (${job.execution.trainer})`,
    ],
    ["estimated cost", money(job.estimatedCost)],
    ["created", `${time(job.createTime)} by ${job.createdBy}`],
    ["started", time(job.startTime)],
    ["completed", time(job.completeTime)],
  ];
  ctx.print(fields(pairs));
}

/** What `watch` (and `create --watch`) prints at the end, and its exit code. */
function finish(ctx: Context, job: TrainingJob): void {
  if (ctx.json) ctx.printJson(job);
  if (job.state === "JOB_STATE_SUCCEEDED") {
    if (!ctx.json) {
      ctx.print(
        `${ctx.style("green", "Succeeded")}: job ${job.jobId}, ${count(job.progress.processedTokens)} tokens trained.`,
      );
      ctx.print(`Output model: ${job.outputModel}`);
      ctx.print(`Try it: ${ctx.invocation} chat --model ${job.outputModel}`);
    }
    return;
  }
  throw new CliError(
    `job ${job.jobId} ended ${state(job.state)}${job.stateDetail ? `: ${job.stateDetail}` : ""}${job.errorClass ? ` [${job.errorClass}]` : ""}`,
    EXIT.FAILED,
  );
}

interface WatchFlags {
  interval?: number;
  timeout?: number;
  chart: boolean;
}

function addWatchOptions(command: Command): Command {
  return command
    .option("--interval <seconds>", "time between two polls (default 1)", seconds)
    .option("--timeout <seconds>", "stop watching after this long (exit 9; the job goes on)", seconds)
    .option("--no-chart", "no loss curve, only the progress bar");
}

async function watch(
  ctx: Context,
  job: TrainingJob,
  flags: WatchFlags,
  signal: AbortSignal | undefined,
): Promise<void> {
  const done = await watchJob(ctx, job, {
    intervalMs: flags.interval ?? 1000,
    chart: flags.chart,
    ...(flags.timeout !== undefined ? { timeoutMs: flags.timeout } : {}),
    ...(signal ? { signal } : {}),
  });
  finish(ctx, done);
}

/** The account's job states as `--state` takes them, without the prefix (QUEUED, RUNNING, …). */
const STATE_CHOICES = enums.JobState.map((s) => s.replace(/^JOB_STATE_/, ""));

export function jobsCommand(signal?: AbortSignal): Command {
  const jobs = new Command("jobs").description(
    "Fine-tuning jobs, supervised (SFT) or preference (DPO): estimate, create, follow, inspect, cancel, plot.",
  );
  addEstimateCommand(jobs);
  addCreateCommand(jobs, signal);
  addListCommand(jobs);
  addGetCommand(jobs);
  addCancelCommand(jobs);
  addWatchCommand(jobs, signal);
  addMetricsCommand(jobs);
  return jobs;
}

function addEstimateCommand(jobs: Command): void {
  addTrainingOptions(
    jobs
      .command("estimate")
      .description("What a job would cost, with the working, and whether it would be allowed. Creates nothing."),
  ).action(
    act<[], TrainingOptions>(async (ctx, options) => {
      const { type, body } = jobRequest(ctx, options);
      const result = await jobCollection(type).estimate(ctx.client, ctx.account, body);
      if (ctx.json) return ctx.printJson(result);
      ctx.print(estimateText(type, body, result));
    }),
  );
}

type CreateOptions = TrainingOptions & WatchFlags & { yes?: boolean; idempotencyKey?: string; watch?: boolean };

function addCreateCommand(jobs: Command, signal: AbortSignal | undefined): void {
  addWatchOptions(
    addTrainingOptions(
      jobs
        .command("create")
        .description(
          "Print the estimate's working, ask before a billable run (unless --yes), then create the job. Retried creates are safe (Idempotency-Key).",
        ),
    )
      .option("-y, --yes", "do not ask before a billable run")
      .option(
        "--idempotency-key <key>",
        "send this Idempotency-Key (a repeat with the same key returns the first job); default: a fresh one",
      )
      .option("--watch", "then follow the job as `jobs watch` does"),
  ).action(act<[], CreateOptions>((ctx, options) => createJob(ctx, options, signal)));
}

/** `jobs create`: the estimate's working, the question before a billable run, the job, then maybe `watch`. */
async function createJob(ctx: Context, options: CreateOptions, signal: AbortSignal | undefined): Promise<void> {
  const { type, body } = jobRequest(ctx, options);
  const collection = jobCollection(type);
  const result = await collection.estimate(ctx.client, ctx.account, body);
  if (!ctx.json) ctx.print(estimateText(type, body, result));
  if (Number(result.estimate.estimatedCost.amount) > 0) {
    await ctx.confirm(`Start this billable job (estimated ${money(result.estimate.estimatedCost)})?`, options.yes);
  }
  const job = await collection.create(ctx.client, ctx.account, body, options.idempotencyKey);
  const unremembered = rememberJob(ctx.io.env, ctx.baseUrl, ctx.account, job);
  if (unremembered) ctx.note(`note: \`latest\` will not know this job (${unremembered.message})`);
  if (options.watch) {
    ctx.note(`Created job ${job.jobId}`);
    return watch(ctx, job, options, signal);
  }
  if (ctx.json) return ctx.printJson(job);
  ctx.print(
    `Created job ${job.jobId} (${state(job.state)}); it will make ${resourceName(ctx.account, "models", job.config.outputModelId)}`,
  );
  ctx.print(`Follow it: ${ctx.invocation} jobs watch ${job.jobId}`);
}

function addListCommand(jobs: Command): void {
  addTypeOptions(jobs.command("list").description("List jobs, newest first (SFT and DPO unless --type says)."), "only")
    .addOption(new Option("--state <state>", "only jobs in this state").choices(STATE_CHOICES))
    .action(
      act<[], TypeOptions & { state?: string }>(async (ctx, options) => {
        const all = await listJobs(ctx, typeOf(options), options.state ? `state:${options.state}` : undefined);
        if (ctx.json) return ctx.printJson(all);
        if (all.length === 0) return ctx.print("No jobs.");
        ctx.print(jobsTable(all));
      }),
    );
}

function jobsTable(all: TrainingJob[]): string {
  return table([
    ["JOB", "TYPE", "STATE", "PROGRESS", "BASE MODEL", "OUTPUT MODEL", "CREATED"],
    ...all.map((j) => [
      j.jobId,
      state(j.jobType),
      state(j.state),
      `${j.progress.percent}%`,
      j.baseModel,
      j.outputModel ?? j.config.outputModelId,
      time(j.createTime),
    ]),
  ]);
}

function addGetCommand(jobs: Command): void {
  addTypeOptions(
    jobs.command("get").description("Show a job: state, progress, configuration, data, cost, times."),
    "it is",
  )
    .argument("<job>", "the job id (sft-…, dpo-…), its name, or latest (the newest you created with this tool)")
    .action(
      act<[string], TypeOptions>(async (ctx, options, ref) => {
        const job = await findJob(ctx, ref, typeOf(options));
        if (ctx.json) return ctx.printJson(job);
        printJob(ctx, job);
      }),
    );
}

function addCancelCommand(jobs: Command): void {
  addTypeOptions(
    jobs
      .command("cancel")
      .description("Cancel a queued or running job (409 JOB_STATE_INVALID, exit 5, once it has ended)."),
    "it is",
  )
    .argument("<job>", "the job id, its name, or latest (the newest you created with this tool)")
    .action(
      act<[string], TypeOptions>(async (ctx, options, ref) => {
        const found = await findJob(ctx, ref, typeOf(options));
        const job = await jobCollection(found.jobType).cancel(ctx.client, jobAt(found));
        if (ctx.json) return ctx.printJson(job);
        ctx.print(`Cancelled job ${job.jobId} (${state(job.state)} at ${job.progress.percent}%)`);
      }),
    );
}

function addWatchCommand(jobs: Command, signal: AbortSignal | undefined): void {
  addWatchOptions(
    addTypeOptions(
      jobs
        .command("watch")
        .description(
          "Follow a job to its end: progress bar (epoch, percent, tokens) and a live loss curve; ends with the output model's name. Exit 8 if it fails.",
        ),
      "it is",
    ).argument("<job>", "the job id, its name, or latest (the newest you created with this tool)"),
  ).action(
    act<[string], TypeOptions & WatchFlags>(async (ctx, options, ref) => {
      await watch(ctx, await findJob(ctx, ref, typeOf(options)), options, signal);
    }),
  );
}

type MetricsOptions = TypeOptions & { plot?: string; log?: boolean; maxPoints?: number };

function addMetricsCommand(jobs: Command): void {
  addTypeOptions(
    jobs
      .command("metrics")
      .description(
        "The training and evaluation loss curves: a table, JSON, or a chart file (--plot out.svg or out.png).",
      ),
    "it is",
  )
    .argument("<job>", "the job id, its name, or latest (the newest job with training steps)")
    .option("--plot <file>", "write the chart to this .svg or .png file (PNG needs Chromium)")
    .option("--log", "with --plot: a logarithmic loss axis")
    .option(
      "--max-points <n>",
      "at most this many points per curve (default 1000; longer curves are thinned)",
      integer(1, 10000),
    )
    .action(
      act<[string], MetricsOptions>(async (ctx, options, ref) => {
        const job = await findJob(ctx, ref, typeOf(options), { withSteps: true });
        const curve = await getCurve(ctx.client, job, options.maxPoints ?? 1000);
        if (options.plot) return plotCurve(ctx, job, curve, options.plot, options.log === true);
        if (ctx.json) return ctx.printJson(curve);
        printCurve(ctx, curve);
      }),
    );
}

/** `metrics --plot`: the loss curves written as an SVG or PNG chart. */
async function plotCurve(ctx: Context, job: TrainingJob, curve: Curve, file: string, log: boolean): Promise<void> {
  if (curve.points.length === 0)
    throw new CliError(
      `job ${job.jobId} has no training steps yet (${state(job.state)}): nothing to plot`,
      EXIT.FAILED,
    );
  // Vega loads only when a chart is asked for.
  const { lossChartSpec, writeChart } = await import("../plot.ts");
  // Vega and, for a PNG, Chromium take seconds to start on a busy machine.
  const progress = waiting(ctx, `Drawing ${file}`);
  const format = await writeChart(file, lossChartSpec(job, curve, { log }), ctx.io.env).finally(() => progress.done());
  if (ctx.json)
    return ctx.printJson({
      file,
      format,
      points: curve.points.length,
      evaluationPoints: curve.evaluationPoints.length,
    });
  ctx.print(
    `Wrote ${file} (${format.toUpperCase()}): ${curve.points.length} training points, ${curve.evaluationPoints.length} evaluation points`,
  );
}

/** `metrics`: the curve as a table, the evaluation loss beside the step it was measured at. */
function printCurve(ctx: Context, curve: Curve): void {
  const evalByStep = new Map(curve.evaluationPoints.map((p) => [p.step, p.loss]));
  ctx.print(
    table([
      ["STEP", "EPOCH", "LOSS", "EVAL LOSS", "LEARNING RATE", "TIME"],
      ...curve.points.map((p) => [
        p.step,
        String(p.epoch),
        p.loss,
        evalByStep.get(p.step) ?? "",
        String(p.learningRate),
        time(p.time),
      ]),
    ]),
  );
  ctx.print(
    `${curve.points.length} of ${curve.totalPoints} training points, ${curve.evaluationPoints.length} of ${curve.totalEvaluationPoints} evaluation points; ${curve.complete ? "complete" : "still recording"}`,
  );
}
