/**
 * `jobs metrics --plot`: the training and evaluation loss curves as a chart file, drawn
 * by Vega-Lite (compiled to Vega, rendered headless to SVG, no canvas needed). PNG is the
 * SVG drawn by headless Chromium.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import * as vega from "vega";
import { compile, type TopLevelSpec } from "vega-lite";
import type { Schema, TrainingJob } from "../client/index.ts";
import { svgToPng } from "./browser.ts";
import { usageError } from "./errors.ts";

type Curve = Schema<"TrainingCurve">;

export const SERIES_COLORS = { training: "#1f77b4", evaluation: "#ff7f0e" } as const;

/** The Vega-Lite chart of a job's curve: loss against step, one line per series, epoch boundaries marked. */
export interface ChartOptions {
  width?: number;
  height?: number;
  /** A logarithmic loss axis (losses that fall by orders of magnitude). */
  log?: boolean;
}

export function lossChartSpec(
  job: Pick<TrainingJob, "jobId" | "jobType" | "baseModel" | "config">,
  curve: Curve,
  options: ChartOptions = {},
): TopLevelSpec {
  const values = [
    ...curve.points.map((p) => ({ step: Number(p.step), epoch: p.epoch, loss: Number(p.loss), series: "training" })),
    ...curve.evaluationPoints.map((p) => ({
      step: Number(p.step),
      epoch: p.epoch,
      loss: Number(p.loss),
      series: "evaluation",
    })),
  ];
  // Between the last step of an epoch and the first of the next.
  const boundaries: { step: number; label: string }[] = [];
  for (let i = 1; i < curve.points.length; i++) {
    const a = curve.points[i - 1]!;
    const b = curve.points[i]!;
    if (b.epoch !== a.epoch)
      boundaries.push({ step: (Number(a.step) + Number(b.step)) / 2, label: `epoch ${b.epoch}` });
  }
  const domain = curve.evaluationPoints.length > 0 ? ["training", "evaluation"] : ["training"];
  const kind = job.jobType === "JOB_TYPE_DPO" ? "DPO" : "SFT";
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: {
      text: `Loss of job ${job.jobId}`,
      subtitle: `${kind}: ${job.baseModel} → ${job.config.outputModelId}, ${curve.totalPoints} steps${curve.complete ? "" : " so far"}`,
      anchor: "start",
    },
    width: options.width ?? 720,
    height: options.height ?? 360,
    background: "white",
    padding: 12,
    layer: [
      {
        data: { values: boundaries },
        mark: { type: "rule", strokeDash: [4, 4], color: "#999" },
        encoding: { x: { field: "step", type: "quantitative" } },
      },
      {
        data: { values: boundaries },
        mark: { type: "text", align: "left", baseline: "top", dx: 3, dy: 3, color: "#777", fontSize: 10 },
        encoding: { x: { field: "step", type: "quantitative" }, y: { value: 0 }, text: { field: "label" } },
      },
      {
        data: { values },
        mark: { type: "line", strokeWidth: 2, interpolate: "monotone" },
        encoding: {
          x: { field: "step", type: "quantitative", title: "Training step", axis: { tickMinStep: 1 } },
          y: {
            field: "loss",
            type: "quantitative",
            title: options.log ? "Loss (log scale)" : "Loss",
            scale: options.log ? { type: "log" } : { zero: false },
          },
          color: {
            field: "series",
            type: "nominal",
            title: "Loss measured on",
            scale: { domain, range: domain.map((s) => SERIES_COLORS[s as keyof typeof SERIES_COLORS]) },
            legend: { orient: "top-right" },
          },
        },
      },
      {
        data: { values: values.filter((v) => v.series === "evaluation") },
        mark: { type: "point", filled: true, size: 60, color: SERIES_COLORS.evaluation },
        encoding: { x: { field: "step", type: "quantitative" }, y: { field: "loss", type: "quantitative" } },
      },
    ],
    config: {
      font: "DejaVu Sans, Liberation Sans, Arial, sans-serif",
      axis: { labelFontSize: 11, titleFontSize: 13 },
      title: { fontSize: 16 },
    },
  } as TopLevelSpec;
}

/** The chart as an SVG document. */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: "none" });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/** Writes the chart to `file`, as SVG or PNG by its extension; returns the format. */
export async function writeChart(
  file: string,
  spec: TopLevelSpec,
  env: NodeJS.ProcessEnv = process.env,
): Promise<"svg" | "png"> {
  const ext = path.extname(file).toLowerCase();
  if (ext !== ".svg" && ext !== ".png")
    throw usageError(`--plot writes .svg or .png, not ${ext || "a file without extension"}: ${file}`);
  const svg = await renderSvg(spec);
  // `--plot reports/loss.svg` in a fresh checkout: the folder is made, as a user expects.
  mkdirSync(path.dirname(file), { recursive: true });
  if (ext === ".svg") {
    writeFileSync(file, svg);
    return "svg";
  }
  writeFileSync(file, await svgToPng(svg, env));
  return "png";
}
