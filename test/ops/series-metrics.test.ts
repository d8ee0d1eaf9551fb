/**
 * The series metrics (server/ops/series-metrics.ts) must be exposed exactly as prom-client's
 * own Counter and Histogram would expose the same observations: the same scrape text and
 * the same JSON, whatever order the label sets come in.
 */
import client from "prom-client";
import { describe, expect, it } from "vitest";
import { SeriesCounter, SeriesHistogram } from "../../server/ops/series-metrics.ts";

const BUCKETS = [0.005, 0.01, 0.1, 1];
type Labels = { operation: string; status: string };
const OBSERVATIONS: [Labels, number][] = [
  [{ operation: "listModels", status: "200" }, 0.004],
  [{ operation: "createResponse", status: "200" }, 0.3],
  [{ operation: "listModels", status: "200" }, 0.005],
  // the label object's keys in another order: the same series
  [{ status: "200", operation: "listModels" } as Labels, 0.05],
  [{ operation: "createResponse", status: "429" }, 0],
  // above the last bound: only +Inf, _sum and _count
  [{ operation: "createResponse", status: "200" }, 7.5],
];

function pair() {
  const ours = new client.Registry();
  const theirs = new client.Registry();
  const config = { help: "Help text with a \\ and a\nnewline.", labelNames: ["operation", "status"] as const };
  return {
    ours,
    theirs,
    counter: new SeriesCounter({ name: "things_total", ...config, registers: [ours] }),
    stockCounter: new client.Counter({ name: "things_total", ...config, registers: [theirs] }),
    histogram: new SeriesHistogram({ name: "thing_seconds", ...config, buckets: BUCKETS, registers: [ours] }),
    stockHistogram: new client.Histogram({ name: "thing_seconds", ...config, buckets: BUCKETS, registers: [theirs] }),
  };
}

describe("series metrics", () => {
  it("expose the same text and JSON as prom-client's Counter and Histogram", async () => {
    const m = pair();
    for (const [labels, value] of OBSERVATIONS) {
      m.histogram.series(labels).observe(value);
      m.stockHistogram.observe(labels, value);
      m.counter.series(labels).inc();
      m.stockCounter.inc(labels);
    }
    // the general forms go through the series too
    m.counter.inc({ operation: "listModels", status: "200" }, 2);
    m.stockCounter.inc({ operation: "listModels", status: "200" }, 2);
    m.histogram.observe({ operation: "createResponse", status: "429" }, 0.01);
    m.stockHistogram.observe({ operation: "createResponse", status: "429" }, 0.01);
    // prom-client's other ways in
    m.counter.labels("listModels", "200").inc();
    m.stockCounter.labels("listModels", "200").inc();
    m.histogram.labels({ operation: "deleteModel", status: "204" }).observe(0.02);
    m.stockHistogram.labels({ operation: "deleteModel", status: "204" }).observe(0.02);
    m.histogram.zero({ operation: "getModel", status: "200" });
    m.stockHistogram.zero({ operation: "getModel", status: "200" });
    // without labels: a series of its own with none
    m.counter.inc(3);
    m.stockCounter.inc(3);
    m.histogram.observe(0.2);
    m.stockHistogram.observe(0.2);

    const text = await m.ours.metrics();
    expect(text).toBe(await m.theirs.metrics());
    expect(text).toContain('thing_seconds_bucket{le="+Inf",operation="createResponse",status="200"} 2');
    expect(await m.ours.getMetricsAsJSON()).toEqual(await m.theirs.getMetricsAsJSON());
  });

  it("keep a handle valid across reset, counting from zero", async () => {
    const m = pair();
    const handle = m.histogram.series({ operation: "listModels", status: "200" });
    handle.observe(0.5);
    m.histogram.reset();
    handle.observe(0.02);
    m.stockHistogram.observe({ operation: "listModels", status: "200" }, 0.02);
    expect(await m.ours.metrics()).toBe(await m.theirs.metrics());
  });

  it("refuse what prom-client refuses: an unknown label, a value that is not a number, a decrease", () => {
    const m = pair();
    expect(() => m.counter.series({ operation: "a", status: "200", extra: "x" } as Labels)).toThrow(/extra/);
    expect(() => m.histogram.series({ operation: "a", status: "200" }).observe(Number.NaN)).toThrow(TypeError);
    expect(() => m.counter.series({ operation: "a", status: "200" }).inc(-1)).toThrow(/decrease/);
    // a handle someone holds would silently count for nothing
    expect(() => m.histogram.remove({ operation: "a", status: "200" })).toThrow(/never removed/);
  });

  it("time with startTimer into the series of the labels given at start and end", async () => {
    const m = pair();
    const end = m.histogram.startTimer({ operation: "listModels" });
    const seconds = end({ status: "200" });
    expect(seconds).toBeGreaterThanOrEqual(0);
    const [metric] = (await m.ours.getMetricsAsJSON()).filter((x) => x.name === "thing_seconds");
    const count = metric!.values.find((v) => (v as { metricName?: string }).metricName === "thing_seconds_count");
    expect(count).toMatchObject({ value: 1, labels: { operation: "listModels", status: "200" } });
  });
});
