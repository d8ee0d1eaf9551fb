/**
 * An upload far larger than what the server may hold in memory: the real server (a child
 * process, so its memory is its own) receives 512 MiB, and its peak resident memory grows
 * by a small fraction of that. Linux only (reads /proc/<pid>/status).
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, test } from "vitest";
import { skipping } from "../support/skip.ts";
import { seedKeys } from "../../harness/test-server.ts";
import { kill, startChild } from "../server/child-process.ts";
import { call, createDataset, jsonl, sftRow, type Target } from "./helpers.ts";

const UPLOAD_BYTES = 512 * 1024 * 1024;
/** Generous for buffers in flight and heap growth; a body held whole would need 512 MiB. */
const MAX_GROWTH_BYTES = 128 * 1024 * 1024;

const scratch = mkdtempSync(path.join(os.tmpdir(), "datasets-large-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Peak resident memory of a process so far, in bytes. */
function peakRss(pid: number): number {
  const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  return Number(kb) * 1024;
}

/** `totalBytes` of rows, generated as they are sent. */
function generated(totalBytes: number): ReadableStream<Uint8Array> {
  const chunk = Buffer.from(jsonl(Array.from({ length: 2000 }, (_, i) => sftRow(`question ${i}`, `answer ${i}`))));
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      const size = Math.min(chunk.length, totalBytes - sent);
      if (size <= 0) return controller.close();
      controller.enqueue(chunk.subarray(0, size));
      sent += size;
    },
  });
}

test(
  "a 512 MiB upload streams to disk without the server holding it",
  { skip: skipping(!existsSync("/proc/self/status")) },
  async () => {
    const dataDir = path.join(scratch, "data");
    const { child, baseUrl } = await startChild(dataDir);
    try {
      const t: Target = { baseUrl, key: seedKeys().acme as string, account: "acme" };
      await createDataset(t, "large");
      const before = peakRss(child.pid!);
      const r = await call(t, "POST", "/datasets/large:upload", {
        raw: generated(UPLOAD_BYTES),
        type: "application/jsonl",
      });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.bytes, String(UPLOAD_BYTES));
      assert.equal(statSync(path.join(dataDir, "datasets", "acme", "large", "1.jsonl")).size, UPLOAD_BYTES);
      const growth = peakRss(child.pid!) - before;
      assert.ok(growth < MAX_GROWTH_BYTES, `peak memory grew by ${Math.round(growth / 1024 / 1024)} MiB`);
    } finally {
      await kill(child);
    }
  },
);
