/**
 * The validation workers are kept between files (server/datasets/validation-pool.ts): one
 * worker serves files one after another, a file it cannot read is an outcome (not a dead
 * worker), two files at once get two workers, and close() ends them all.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, test } from "vitest";
import { ValidationPool } from "../../server/datasets/validation-pool.ts";

const dir = mkdtempSync(path.join(tmpdir(), "validation-pool-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, rows: unknown[]): string {
  const at = path.join(dir, name);
  writeFileSync(at, rows.map((row) => JSON.stringify(row)).join("\n") + "\n");
  return at;
}

const row = (q: string, a: string) => ({
  messages: [
    { role: "user", content: q },
    { role: "assistant", content: a },
  ],
});

test("one worker validates file after file, and a missing file is an outcome, not a lost worker", async () => {
  const pool = new ValidationPool();
  try {
    const first = await pool.check(file("a.jsonl", [row("Hello!", "Ahoy!"), row("Hi", "Arr")]));
    assert.ok(first.ok);
    assert.equal(first.result.exampleCount, 2);
    const missing = await pool.check(path.join(dir, "nothing-here.jsonl"));
    assert.equal(missing.ok, false);
    assert.match(missing.ok ? "" : missing.message, /could not be read/);
    const second = await pool.check(file("b.jsonl", [row("One", "Two")]));
    assert.ok(second.ok);
    assert.equal(second.result.exampleCount, 1);
    assert.equal(pool.workerCount, 1, "the same worker served all three");
  } finally {
    await pool.close();
  }
  assert.equal(pool.workerCount, 0);
});

test("two files at once get two workers; both stay for the next files", async () => {
  const pool = new ValidationPool();
  try {
    const files = [file("c.jsonl", [row("a", "b")]), file("d.jsonl", [row("c", "d"), row("e", "f")])];
    const outcomes = await Promise.all(files.map((f) => pool.check(f)));
    assert.deepEqual(
      outcomes.map((o) => (o.ok ? o.result.exampleCount : -1)),
      [1, 2],
    );
    assert.equal(pool.workerCount, 2);
    await Promise.all(files.map((f) => pool.check(f)));
    assert.equal(pool.workerCount, 2);
  } finally {
    await pool.close();
  }
});
