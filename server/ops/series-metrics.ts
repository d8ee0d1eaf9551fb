/**
 * prom-client's Counter and Histogram with each label set resolved once: `series(labels)`
 * returns a handle whose `inc` or `observe` is a few additions, and the metric is exposed
 * by the registry exactly as prom-client's own would be (test/ops/series-metrics.test.ts
 * compares the scrape text).
 *
 * Why: every `inc(labels)` or `observe(labels, v)` of prom-client checks the label names,
 * builds a hash string from the sorted labels and looks it up in an object used as a map;
 * for the request metrics that was 8–12 % of the CPU of a `GET /v1/models` in a pinned A/B
 * (bench/ops-overhead.ts measures what operating costs). A handle is looked up once per
 * label set (a Map keyed by the values in label order) and kept by hot callers.
 *
 * prom-client's other ways in (`labels()`, `startTimer()`, `zero()`) go through the same
 * series. Label sets are never removed (`remove()` throws): `reset()` zeroes them in place,
 * so a handle a caller kept stays valid.
 */
import client from "prom-client";

type LabelSet<T extends string> = Record<T, string>;

export interface CounterSeries {
  inc(value?: number): void;
}

export interface HistogramSeries {
  observe(value: number): void;
}

/** What prom-client's metrics hand the registry (its typings declare `type` an enum; at run time it is the name). */
interface Exposed<V> {
  name: string;
  help: string;
  type: "counter" | "histogram";
  values: V[];
  aggregator: client.Aggregator;
}
type CounterGet = Awaited<ReturnType<client.Counter["get"]>>;
type HistogramGet = Awaited<ReturnType<client.Histogram["get"]>>;
interface HistogramValue {
  labels: Record<string, string | number>;
  sharedLabels?: Record<string, string>;
  value: number;
  metricName: string;
  exemplar?: null;
}

/**
 * The entry of a label set, made by `create` at its first use. Keyed by the label values
 * in label-name order (a missing label reads "undefined", as in prom-client's hash).
 */
function entryFor<T extends string, E>(
  entries: Map<string, E>,
  metric: string,
  labelNames: readonly T[],
  labels: LabelSet<T>,
  create: (labels: Record<string, string>) => E,
): E {
  let key = "";
  for (const name of labelNames) key += `${labels[name]}\u0000`;
  let entry = entries.get(key);
  if (entry === undefined) {
    checkLabels(metric, labelNames, labels);
    entry = create({ ...labels });
    entries.set(key, entry);
  }
  return entry;
}

/** prom-client's two ways to name a label set: an object, or the values in label-name order. */
function labelSetOf<T extends string>(labelNames: readonly T[], args: unknown[]): LabelSet<T> {
  if (typeof args[0] === "object" && args[0] !== null) return args[0] as LabelSet<T>;
  return Object.fromEntries(labelNames.map((name, i) => [name, String(args[i])])) as LabelSet<T>;
}

function cannotRemove(metric: string): never {
  // A caller may hold the series' handle: removing it would make that handle count for nothing.
  throw new Error(`${metric}: a series of a SeriesCounter or SeriesHistogram is never removed; reset() zeroes it`);
}

function checkLabels(metric: string, labelNames: readonly string[], labels: Record<string, string>): void {
  for (const name of Object.keys(labels)) {
    if (!labelNames.includes(name))
      throw new Error(`Added label "${name}" is not included in initial labelset of ${metric}`);
  }
}

function checkValue(value: number): void {
  if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
}

class CounterEntry implements CounterSeries {
  value = 0;
  readonly labels: Record<string, string>;
  constructor(labels: Record<string, string>) {
    this.labels = labels;
  }
  inc(value = 1): void {
    checkValue(value);
    if (value < 0) throw new Error("It is not possible to decrease a counter");
    this.value += value;
  }
}

const newCounterEntry = (labels: Record<string, string>) => new CounterEntry(labels);

export class SeriesCounter<T extends string> extends client.Counter<T> {
  readonly #entries = new Map<string, CounterEntry>();
  readonly #labelNames: readonly T[];
  readonly #name: string;
  readonly #help: string;
  readonly #aggregator: client.Aggregator;

  constructor(configuration: client.CounterConfiguration<T> & { labelNames: readonly T[] }) {
    super(configuration);
    this.#labelNames = configuration.labelNames;
    this.#name = configuration.name;
    this.#help = configuration.help;
    this.#aggregator = configuration.aggregator ?? "sum";
    // prom-client assigns `inc` per instance; the general forms, `inc(labels, v)` and `inc(v)`, go through the series too.
    this.inc = ((labels?: LabelSet<T> | number, value?: number) =>
      typeof labels === "object"
        ? this.series(labels).inc(value)
        : this.series({} as LabelSet<T>).inc(labels)) as client.Counter<T>["inc"];
  }

  /** The handle of one label set (all of the counter's labels, as strings). */
  series(labels: LabelSet<T>): CounterSeries {
    return entryFor(this.#entries, this.#name, this.#labelNames, labels, newCounterEntry);
  }

  override labels(...args: (string | client.LabelValues<T>)[]): client.Counter.Internal {
    return this.series(labelSetOf(this.#labelNames, args));
  }

  override remove(..._labels: unknown[]): void {
    cannotRemove(this.#name);
  }

  override async get(): Promise<CounterGet> {
    const exposed: Exposed<{ value: number; labels: Record<string, string> }> = {
      name: this.#name,
      help: this.#help,
      type: "counter",
      values: [...this.#entries.values()].map((entry) => ({ value: entry.value, labels: { ...entry.labels } })),
      aggregator: this.#aggregator,
    };
    return exposed as unknown as CounterGet;
  }

  override reset(): void {
    super.reset();
    // prom-client's constructor calls reset() before this class's fields exist.
    if (!(#entries in this)) return;
    for (const entry of this.#entries.values()) entry.value = 0;
  }
}

class HistogramEntry implements HistogramSeries {
  sum = 0;
  count = 0;
  /** Observations per bucket, not cumulative; above the last bound only `count` grows (the +Inf bucket). */
  readonly buckets: number[];
  readonly labels: Record<string, string>;
  readonly #bounds: readonly number[];
  constructor(labels: Record<string, string>, bounds: readonly number[]) {
    this.labels = labels;
    this.#bounds = bounds;
    this.buckets = bounds.map(() => 0);
  }
  clear(): void {
    this.sum = 0;
    this.count = 0;
    this.buckets.fill(0);
  }
  observe(value: number): void {
    checkValue(value);
    const bounds = this.#bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= (bounds[i] as number)) {
        (this.buckets[i] as number)++;
        break;
      }
    }
    this.sum += value;
    this.count++;
  }
}

export class SeriesHistogram<T extends string> extends client.Histogram<T> {
  readonly #entries = new Map<string, HistogramEntry>();
  readonly #labelNames: readonly T[];
  readonly #bounds: readonly number[];
  readonly #newEntry = (labels: Record<string, string>) => new HistogramEntry(labels, this.#bounds);
  readonly #name: string;
  readonly #help: string;
  readonly #aggregator: client.Aggregator;

  constructor(configuration: client.HistogramConfiguration<T> & { labelNames: readonly T[]; buckets: number[] }) {
    super(configuration);
    this.#labelNames = configuration.labelNames;
    this.#name = configuration.name;
    this.#help = configuration.help;
    this.#aggregator = configuration.aggregator ?? "sum";
    this.#bounds = [...configuration.buckets];
    // As for the counter: `observe(labels, v)` and `observe(v)`.
    this.observe = ((labels: LabelSet<T> | number, value?: number) =>
      typeof labels === "object"
        ? this.series(labels).observe(value as number)
        : this.series({} as LabelSet<T>).observe(labels)) as client.Histogram<T>["observe"];
  }

  /** The handle of one label set (all of the histogram's labels, as strings). */
  series(labels: LabelSet<T>): HistogramSeries {
    return entryFor(this.#entries, this.#name, this.#labelNames, labels, this.#newEntry);
  }

  override labels(...args: (string | client.LabelValues<T>)[]): client.Histogram.Internal<T> {
    const labels = labelSetOf(this.#labelNames, args);
    const series = this.series(labels);
    return { observe: (value) => series.observe(value), startTimer: () => this.startTimer(labels) };
  }

  /** Returns a function that observes the seconds since this call (with these labels and those it is given). */
  override startTimer(labels?: client.LabelValues<T>): (more?: client.LabelValues<T>) => number {
    const started = performance.now();
    return (more) => {
      const seconds = (performance.now() - started) / 1000;
      this.series({ ...labels, ...more } as LabelSet<T>).observe(seconds);
      return seconds;
    };
  }

  override zero(labels: client.LabelValues<T>): void {
    (this.series(labels as LabelSet<T>) as HistogramEntry).clear();
  }

  override remove(..._labels: unknown[]): void {
    cannotRemove(this.#name);
  }

  /** The values as prom-client's Histogram hands them to the registry (a series' labels shared by its lines). */
  async getForPromString(): Promise<Exposed<HistogramValue>> {
    const bucketName = `${this.#name}_bucket`;
    const values: HistogramValue[] = [];
    for (const entry of this.#entries.values()) {
      const sharedLabels = entry.labels;
      let cumulative = 0;
      this.#bounds.forEach((bound, i) => {
        cumulative += entry.buckets[i] as number;
        values.push({ labels: { le: bound }, sharedLabels, value: cumulative, metricName: bucketName, exemplar: null });
      });
      values.push(
        { labels: { le: "+Inf" }, sharedLabels, value: entry.count, metricName: bucketName, exemplar: null },
        { labels: {}, sharedLabels, value: entry.sum, metricName: `${this.#name}_sum` },
        { labels: {}, sharedLabels, value: entry.count, metricName: `${this.#name}_count` },
      );
    }
    return { name: this.#name, help: this.#help, type: "histogram", values, aggregator: this.#aggregator };
  }

  /** As prom-client's: each line's own and shared labels in one object. */
  override async get(): Promise<HistogramGet> {
    const exposed = await this.getForPromString();
    const values = exposed.values.map(({ sharedLabels, labels, ...rest }) => ({
      ...rest,
      labels: { ...labels, ...sharedLabels },
    }));
    return { ...exposed, values } as unknown as HistogramGet;
  }

  override reset(): void {
    super.reset();
    // prom-client's constructor calls reset() before this class's fields exist.
    if (!(#entries in this)) return;
    for (const entry of this.#entries.values()) entry.clear();
  }
}
