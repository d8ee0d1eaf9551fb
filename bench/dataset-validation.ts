/**
 * Dataset validation benchmark: validates a generated JSONL file of supervised rows
 * (default 1 GiB) with the server's validator (server/datasets/validate-file.ts: every
 * row parsed and checked, tokens counted exactly on the first 20 000 rows and on a random
 * sample of about as many after), timed against a baseline measured in the same run on the same
 * file: plain line splitting and JSON.parse of each line, the least any validator must do.
 * Each run is its own child process, so its peak RSS (process.resourceUsage().maxRSS) is
 * its own. Prints throughput, the ratio to the baseline and peak RSS; removes the file.
 *
 *   npm run bench:datasets [-- <size>]     size: 1GiB (default), 256MiB, 64MiB, …
 */
import { execFileSync } from "node:child_process";
import { createReadStream, mkdtempSync, openSync, closeSync, rmSync, statSync, writeSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

interface Measurement {
  seconds: number;
  maxRssBytes: number;
  lines: number;
  detail: string;
}

const SELF = fileURLToPath(import.meta.url);

if (process.argv[2] === "--measure") {
  const result = await measure(process.argv[3] as string, process.argv[4] as string);
  process.stdout.write(JSON.stringify(result));
} else {
  await main(parseSize(process.argv[2] ?? "1GiB"));
}

async function main(bytes: number): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "bench-datasets-"));
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  process.once("SIGINT", () => {
    cleanup();
    process.exit(130);
  });
  try {
    const file = path.join(dir, "rows.jsonl");
    const started = performance.now();
    generate(file, bytes);
    const size = statSync(file).size;
    console.log(
      `Generated ${mib(size)} MiB of supervised rows in ${((performance.now() - started) / 1000).toFixed(1)} s (${file})`,
    );
    const baseline = runChild("baseline", file);
    const validator = runChild("validate", file);
    printTable(size, baseline, validator);
    console.log(`\nvalidator: ${validator.detail}`);
  } finally {
    cleanup();
  }
}

function runChild(kind: string, file: string): Measurement {
  const output = execFileSync(process.execPath, [SELF, "--measure", kind, file], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  return JSON.parse(output) as Measurement;
}

async function measure(kind: string, file: string): Promise<Measurement> {
  const started = performance.now();
  const { lines, detail } = kind === "baseline" ? await splitAndParse(file) : await validate(file);
  const seconds = (performance.now() - started) / 1000;
  return { seconds, maxRssBytes: process.resourceUsage().maxRSS * 1024, lines, detail };
}

/** The baseline: split the bytes at newlines, decode each line, JSON.parse it. Nothing else. */
async function splitAndParse(file: string): Promise<{ lines: number; detail: string }> {
  let lines = 0;
  let carry: Buffer = Buffer.alloc(0);
  // The validator's chunk size (validate-file.ts READ_CHUNK_BYTES), so both read alike.
  for await (const chunk of createReadStream(file, { highWaterMark: 64 * 1024 }) as AsyncIterable<Buffer>) {
    const data = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
    let start = 0;
    for (let end = data.indexOf(10); end !== -1; end = data.indexOf(10, start)) {
      if (end > start) {
        JSON.parse(data.toString("utf8", start, end));
        lines++;
      }
      start = end + 1;
    }
    carry = data.subarray(start);
  }
  if (carry.length > 0) {
    JSON.parse(carry.toString("utf8"));
    lines++;
  }
  return { lines, detail: "" };
}

async function validate(file: string): Promise<{ lines: number; detail: string }> {
  // Imported here, so the baseline's process does not load the validator and its tokenizer.
  const { validateFile } = await import("../server/datasets/validate-file.ts");
  const result = await validateFile(file);
  const detail = `totalLines ${result.totalLines}, validLines ${result.validLines}, format ${result.format}, estimatedTokenCount ${result.estimatedTokenCount}`;
  return { lines: result.totalLines, detail };
}

/** Writes rows of varied length until the file holds `bytes`; deterministic (seeded). */
function generate(file: string, bytes: number): void {
  const random = seeded(42);
  const words =
    "the a model answer question data token train loss batch epoch river mountain city paris café naïve 東京 quickly because which service request".split(
      " ",
    );
  const sentence = (n: number) => Array.from({ length: n }, () => words[Math.floor(random() * words.length)]).join(" ");
  const fd = openSync(file, "w");
  try {
    let written = 0;
    while (written < bytes) {
      const batch: string[] = [];
      for (let i = 0; i < 2000; i++) {
        const messages = [
          ...(random() < 0.3 ? [{ role: "system", content: sentence(8) }] : []),
          { role: "user", content: `${sentence(4 + Math.floor(random() * 30))}?` },
          { role: "assistant", content: `${sentence(6 + Math.floor(random() * 80))}.` },
        ];
        batch.push(`${JSON.stringify({ messages })}\n`);
      }
      const chunk = Buffer.from(batch.join(""));
      // The last batch stops at the end of the line that reaches the size: whole lines only.
      const remaining = bytes - written;
      const end = remaining >= chunk.length ? chunk.length : chunk.indexOf(10, remaining - 1) + 1;
      writeSync(fd, chunk, 0, end);
      written += end;
    }
  } finally {
    closeSync(fd);
  }
}

function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function printTable(size: number, baseline: Measurement, validator: Measurement): void {
  const rows = [
    ["run", "lines", "seconds", "MB/s", "vs baseline", "peak RSS MiB"],
    row("baseline: split + JSON.parse", baseline, baseline),
    row("validateFile", validator, baseline),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  console.log(`\nFile: ${mib(size)} MiB (${size} bytes); MB = 10^6 bytes\n`);
  for (const [i, r] of rows.entries()) {
    console.log(r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join("  "));
    if (i === 0) console.log(widths.map((w) => "-".repeat(w)).join("  "));
  }

  function row(name: string, m: Measurement, base: Measurement): string[] {
    const mbps = size / 1e6 / m.seconds;
    const baseMbps = size / 1e6 / base.seconds;
    return [
      name,
      String(m.lines),
      m.seconds.toFixed(2),
      mbps.toFixed(1),
      `${(mbps / baseMbps).toFixed(2)}×`,
      mib(m.maxRssBytes),
    ];
  }
}

function mib(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(0);
}

/** `1GiB`, `256MiB`, `64MB`, `1048576`: a size in bytes. */
function parseSize(text: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(|B|KiB|MiB|GiB|KB|MB|GB|K|M|G)$/i.exec(text.trim());
  if (!match) throw new Error(`Not a size: "${text}" (write e.g. 1GiB, 256MiB)`);
  const unit = (match[2] as string).toUpperCase().replace("IB", "").replace("B", "");
  const factor = { "": 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3 }[unit] ?? 1;
  return Math.round(Number(match[1]) * factor);
}
