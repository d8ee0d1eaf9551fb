/**
 * `jobs watch`: follows a training job until it ends. On a terminal: a live loss curve
 * (asciichart) above a progress bar with the epoch, percent and tokens (cli-progress),
 * both redrawn in place by cli-progress's MultiBar, each chart row being one of its
 * lines. Elsewhere (a pipe, a log, `--json`): one plain line per change.
 */
import asciichart from "asciichart";
import cliProgress from "cli-progress";
import { TERMINAL_JOB_STATES, WaitTimeoutError, type ApiClient, type TrainingJob } from "../client/index.ts";
import type { Context } from "./context.ts";
import { count, duration, state } from "./format.ts";
import { jobAt, jobCollection, type Curve } from "./job-collections.ts";

export interface WatchOptions {
  /** Between two polls. */
  intervalMs: number;
  /** Give up after this long (exit 9). */
  timeoutMs?: number;
  /** Draw the loss curve (default true on a terminal). */
  chart: boolean;
  /** Rows of the chart. */
  chartHeight?: number;
  signal?: AbortSignal;
}

export async function getJob(
  client: ApiClient,
  job: Pick<TrainingJob, "jobType" | "jobId" | "name">,
  signal?: AbortSignal,
): Promise<TrainingJob> {
  return jobCollection(job.jobType).get(client, jobAt(job), signal);
}

export async function getCurve(
  client: ApiClient,
  job: Pick<TrainingJob, "jobType" | "jobId" | "name">,
  maxPoints: number,
  signal?: AbortSignal,
): Promise<Curve> {
  return jobCollection(job.jobType).metrics(client, jobAt(job), maxPoints, signal);
}

const Y_LABEL_WIDTH = 9;

/**
 * The curve as asciichart rows, `width` columns of data. The evaluation loss (measured at
 * epoch ends) is a second series: it follows the training line until its first point,
 * where it departs, and is drawn first so the training line stays on top.
 */
export function chartLines(curve: Curve | undefined, width: number, height: number, color: boolean): string[] {
  const train = (curve?.points ?? []).map((p) => ({ step: Number(p.step), loss: Number(p.loss) }));
  if (train.length < 2) {
    const lines = Array.from({ length: height + 1 }, () => "");
    lines[Math.floor(height / 2)] =
      " ".repeat(Y_LABEL_WIDTH) +
      (train.length === 0
        ? "waiting for the first training step…"
        : `step ${train[0]?.step}: loss ${train[0]?.loss.toFixed(4)}`);
    return lines;
  }
  const columns = Math.max(2, Math.min(width, train.length));
  const first = train[0]!.step;
  const last = train.at(-1)!.step;
  const at = (column: number) => first + ((last - first) * column) / (columns - 1);
  const trainSeries = Array.from({ length: columns }, (_, c) => interpolate(train, at(c)));
  const evaluation = (curve?.evaluationPoints ?? []).map((p) => ({ step: Number(p.step), loss: Number(p.loss) }));
  const series: number[][] = [];
  const colors: (string | undefined)[] = [];
  if (evaluation.length > 0) {
    const start = evaluation[0]!.step;
    series.push(trainSeries.map((value, c) => (at(c) < start ? value : interpolate(evaluation, at(c)))));
    colors.push(color ? asciichart.yellow : undefined);
  }
  series.push(trainSeries);
  colors.push(color ? asciichart.cyan : undefined);
  const plot = asciichart.plot(series, {
    height,
    colors,
    offset: 2,
    padding: " ".repeat(Y_LABEL_WIDTH - 2),
    format: (x: number) => x.toFixed(3).padStart(Y_LABEL_WIDTH - 2),
  });
  return plot.split("\n");
}

/** The value at `step`, linear between points, held beyond the ends. */
function interpolate(points: { step: number; loss: number }[], step: number): number {
  if (step <= points[0]!.step) return points[0]!.loss;
  for (let i = 1; i < points.length; i++) {
    const b = points[i]!;
    if (step <= b.step) {
      const a = points[i - 1]!;
      return b.step === a.step ? b.loss : a.loss + ((b.loss - a.loss) * (step - a.step)) / (b.step - a.step);
    }
  }
  return points.at(-1)!.loss;
}

function lastLoss(curve: Curve | undefined): string {
  const p = curve?.points.at(-1);
  return p ? Number(p.loss).toFixed(4) : "-";
}

function lastEvalLoss(curve: Curve | undefined): string | null {
  const p = curve?.evaluationPoints.at(-1);
  return p ? Number(p.loss).toFixed(4) : null;
}

export function statusPayload(job: TrainingJob, curve: Curve | undefined, startedAt: number) {
  const evalLoss = lastEvalLoss(curve);
  return {
    state: state(job.state).padEnd(9),
    epoch: String(job.progress.epoch),
    epochs: String(job.progress.totalEpochs),
    tokens: count(job.progress.processedTokens),
    loss: lastLoss(curve) + (evalLoss ? ` (eval ${evalLoss})` : ""),
    step: String(curve?.points.at(-1)?.step ?? 0),
    elapsed: duration(performance.now() - startedAt),
  };
}

/** The widest the status line gets without its bar (test/cli/watch-line.test.ts measures the worst case). */
export const STATUS_TEXT_WIDTH = 97;

/** The live status line, in cli-progress's placeholders. */
export const STATUS_FORMAT =
  "{state} epoch {epoch}/{epochs} [{bar}] {percentage}% | {tokens} tokens | loss {loss} | {elapsed}";

/** The bar's width in a terminal of `columns`: what the status text leaves, 10 to 40. */
export function statusBarSize(columns: number): number {
  return Math.max(10, Math.min(40, columns - STATUS_TEXT_WIDTH - 1));
}

/** Follows the job to its end; returns it in its terminal state. */
export async function watchJob(ctx: Context, initial: TrainingJob, options: WatchOptions): Promise<TrainingJob> {
  const client = ctx.client;
  const startedAt = performance.now();
  const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
  const columns = ctx.io.stderr.columns ?? 80;
  const chartWidth = Math.max(10, Math.min(120, columns - Y_LABEL_WIDTH - 4));
  const chartHeight = options.chartHeight ?? 10;
  const live = ctx.live;
  const color = ctx.options.color !== false && !ctx.io.env.NO_COLOR;
  const title = `Job ${initial.jobId} (${state(initial.jobType)}): ${initial.baseModel} → ${initial.config.outputModelId}`;

  let multibar: cliProgress.MultiBar | undefined;
  let chartRows: cliProgress.SingleBar[] = [];
  let progress: cliProgress.SingleBar | undefined;
  let legend: cliProgress.SingleBar | undefined;
  if (live) {
    multibar = new cliProgress.MultiBar({
      stream: ctx.io.stderr,
      hideCursor: true,
      clearOnComplete: false,
      stopOnComplete: false,
      // A chart row wider than the terminal would wrap and break the redraw.
      linewrap: false,
      fps: 8,
      autopadding: true,
      // The status line without its bar is at most 97 columns (a long state, epoch 100/100,
      // a billion tokens, both losses, hours): the bar takes what the terminal has left.
      barsize: statusBarSize(columns),
      barCompleteChar: "█",
      barIncompleteChar: "░",
      // Leaves the terminal as it was (cursor shown) on Ctrl-C.
      gracefulExit: true,
    });
    const line = { format: "{line}" };
    multibar.create(1, 0, { line: title }, line);
    if (options.chart) {
      legend = multibar.create(1, 0, { line: "" }, line);
      chartRows = Array.from({ length: chartHeight + 1 }, () => multibar!.create(1, 0, { line: "" }, line));
    }
    progress = multibar.create(100, 0, statusPayload(initial, undefined, startedAt), {
      format: STATUS_FORMAT,
    });
  } else if (!ctx.json) {
    ctx.note(title);
  }

  let job = initial;
  let curve: Curve | undefined;
  let lastLine = "";
  try {
    for (;;) {
      job = await getJob(client, job, options.signal);
      curve = await getCurve(client, job, Math.max(chartWidth, 200), options.signal).catch(() => curve);
      const payload = statusPayload(job, curve, startedAt);
      if (live) {
        if (options.chart) {
          const evaluation = (curve?.evaluationPoints.length ?? 0) > 0;
          legend!.update({
            line:
              `${" ".repeat(Y_LABEL_WIDTH - 4)}loss  ` +
              (color ? asciichart.colored("── training", asciichart.cyan) : "── training") +
              (evaluation
                ? `  ${color ? asciichart.colored("── evaluation", asciichart.yellow) : "── evaluation"}`
                : "") +
              `   (x: step 1 to ${payload.step})`,
          });
          const lines = chartLines(curve, chartWidth, chartHeight, color);
          chartRows.forEach((row, i) => row.update({ line: lines[i] ?? "" }));
        }
        progress!.update(job.progress.percent, payload);
      } else if (!ctx.json) {
        const text = `${state(job.state)} epoch ${payload.epoch}/${payload.epochs} ${job.progress.percent}% ${payload.tokens} tokens loss ${payload.loss}`;
        if (text !== lastLine) ctx.note(text);
        lastLine = text;
      }
      if (TERMINAL_JOB_STATES.includes(job.state)) break;
      if (Date.now() > deadline) {
        throw new WaitTimeoutError(
          `gave up watching job ${job.jobId} after ${duration(options.timeoutMs ?? 0)}; it is ${state(job.state)} and goes on`,
          job,
        );
      }
      await sleep(options.intervalMs, options.signal);
    }
  } finally {
    // Draws the last values and leaves them on the screen (Ctrl-C may have stopped it already).
    if (multibar?.isActive) multibar.stop();
  }
  return job;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
