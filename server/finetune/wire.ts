/** Store records in the contract's shapes: 64-bit integers as strings, times as RFC 3339. */
import type { components } from "../../generated/api.d.ts";
import { formatMoney } from "../store/money.ts";
import { jobName, TERMINAL_STATES, type CurvePoint, type JobRecord } from "../store/fine-tuning.ts";
import { CURRENCY } from "./plan.ts";

type Schemas = components["schemas"];

export function toTrainingJob(job: JobRecord): Schemas["TrainingJob"] {
  return {
    name: jobName(job.accountId, job.jobId),
    jobId: job.jobId,
    jobType: job.jobType,
    state: job.state,
    ...(job.stateDetail !== undefined ? { stateDetail: job.stateDetail } : {}),
    ...(job.errorClass !== undefined ? { errorClass: job.errorClass } : {}),
    baseModel: job.baseModel,
    inputDatasetVersion: job.inputDatasetVersion,
    ...(job.evaluationDatasetVersion !== undefined ? { evaluationDatasetVersion: job.evaluationDatasetVersion } : {}),
    ...(job.outputModel !== undefined ? { outputModel: job.outputModel } : {}),
    config: job.config,
    progress: { ...job.progress, processedTokens: String(job.progress.processedTokens) },
    estimatedCost: { amount: formatMoney(job.estimatedCostMicros), currency: CURRENCY },
    execution: {
      trainer: job.execution.trainer,
      examplesSkipped: String(job.execution.examplesSkipped),
      examplesTrained: String(job.execution.examplesTrained),
      evalExamples: String(job.execution.evalExamples),
      billedTokens: String(job.execution.billedTokens ?? 0),
      billedCost: { amount: formatMoney(job.execution.billedMicros ?? 0), currency: CURRENCY },
    },
    createdBy: job.createdBy,
    createTime: job.createTime.toISOString(),
    ...(job.startTime !== undefined ? { startTime: job.startTime.toISOString() } : {}),
    ...(job.completeTime !== undefined ? { completeTime: job.completeTime.toISOString() } : {}),
  };
}

/**
 * At most `maxPoints` points, spread evenly over the curve with the first and the last
 * kept; one point is the last (the latest loss); zero is none.
 */
export function thin<T>(points: T[], maxPoints: number): T[] {
  if (points.length <= maxPoints) return points;
  if (maxPoints === 0) return [];
  if (maxPoints === 1) return points.slice(-1);
  const last = points.length - 1;
  return Array.from({ length: maxPoints }, (_, i) => points[Math.round((i * last) / (maxPoints - 1))] as T);
}

export function toCurve(
  job: JobRecord,
  training: CurvePoint[],
  evaluation: CurvePoint[],
  maxPoints: number,
): Schemas["TrainingCurve"] {
  const wire = (p: CurvePoint): Schemas["TrainingCurvePoint"] => ({
    step: String(p.step),
    epoch: p.epoch,
    loss: lossText(p.loss),
    learningRate: p.learningRate,
    time: p.time.toISOString(),
  });
  return {
    points: thin(training, maxPoints).map(wire),
    totalPoints: String(training.length),
    complete: TERMINAL_STATES.has(job.state),
    evaluationPoints: thin(evaluation, maxPoints).map(wire),
    totalEvaluationPoints: String(evaluation.length),
  };
}

const LOSS_PLACES = 6;
const LOSS_SIGNIFICANT = 6;

/**
 * Loss as a `DecimalString`: decimal text with no exponent. Six decimals; a loss too small
 * to show in six decimals keeps six significant digits instead (`0.0000000032`, not
 * `0.000000`); a loss of 1e21 or more is written out in full (toFixed would switch to
 * `1e+21`); minus zero is `0`. A loss that is not a finite number is never recorded (the
 * trainer fails the job first), so it is a bug here.
 */
export function lossText(loss: number): string {
  if (!Number.isFinite(loss)) throw new RangeError(`a loss of ${loss} cannot be written as decimal text`);
  const size = Math.abs(loss);
  if (size >= 1e21) return `${BigInt(loss)}.${"0".repeat(LOSS_PLACES)}`; // doubles this large are whole numbers
  if (size === 0 || size >= 0.5 * 10 ** -LOSS_PLACES) return (size === 0 ? 0 : loss).toFixed(LOSS_PLACES);
  // toPrecision writes a number this small as `d.ddddde-N`: spell it out.
  const [mantissa = "", exponent = ""] = size.toPrecision(LOSS_SIGNIFICANT).split("e-");
  const digits = mantissa.replace(".", "").replace(/0+$/, "");
  return `${loss < 0 ? "-" : ""}0.${"0".repeat(Number(exponent) - 1)}${digits}`;
}
