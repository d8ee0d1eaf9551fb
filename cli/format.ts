/** Plain-text formatting of results: numbers, sizes, money, times, tables. */

/** `1234567` → `1,234,567` (int64 values arrive as strings). */
export function count(value: string | number | bigint | undefined | null): string {
  if (value === undefined || value === null || value === "") return "-";
  try {
    return BigInt(value).toLocaleString("en-US");
  } catch {
    return String(value);
  }
}

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB"];

/** Bytes for people: `1536` → `1.5 KiB`. */
export function bytes(value: number | string): string {
  let n = Number(value);
  let unit = 0;
  while (Math.abs(n) >= 1024 && unit < UNITS.length - 1) {
    n /= 1024;
    unit++;
  }
  return unit === 0 ? `${n} B` : `${n.toFixed(n >= 100 ? 0 : 1)} ${UNITS[unit]}`;
}

export function money(value: { amount: string; currency: string } | undefined): string {
  return value ? `${value.amount} ${value.currency}` : "-";
}

/** An ISO time as `2026-11-23 10:49:22` (UTC), or `-`. */
export function time(value: string | undefined): string {
  if (!value) return "-";
  return value.replace("T", " ").replace(/\.\d+Z$|Z$/, "");
}

/** `DATASET_STATE_READY` → `READY`, `JOB_STATE_RUNNING` → `RUNNING`. */
export function state(value: string | undefined): string {
  return (value ?? "-").replace(/^(DATASET_VERSION_STATE|DATASET_STATE|JOB_STATE|JOB_TYPE|DATASET_SOURCE)_/, "");
}

/** Columns padded to their widest cell; the first row is the header. */
export function table(rows: string[][]): string {
  if (rows.length === 0) return "";
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows
    .map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join("  "))
    .join("\n");
}

/** `label  value` pairs, labels padded. */
export function fields(pairs: [string, string][]): string {
  const width = Math.max(...pairs.map(([label]) => label.length));
  return pairs.map(([label, value]) => `${label.padEnd(width)}  ${value}`).join("\n");
}

/** Seconds for people: `75` → `1m15s`. */
export function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return m < 60
    ? `${m}m${String(s % 60).padStart(2, "0")}s`
    : `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`;
}
