/** The line reader under validation and training: line ends, a byte order mark, lines too long to hold. */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, test } from "vitest";
import { jsonlLines, type JsonlLine } from "../../server/datasets/validate-file.ts";

const dir = mkdtempSync(path.join(os.tmpdir(), "jsonl-lines-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function linesOf(content: string | Buffer, maxLineBytes?: number): Promise<JsonlLine[]> {
  const file = path.join(dir, `f${Math.random()}.jsonl`);
  writeFileSync(file, content);
  const lines: JsonlLine[] = [];
  for await (const batch of jsonlLines(file, maxLineBytes)) lines.push(...batch);
  return lines;
}

test("CRLF and LF endings, a last line without a newline, blank lines numbered too", async () => {
  const lines = await linesOf('\uFEFF{"a":1}\r\n\n{"b":2}\n{"c":3}');
  assert.deepEqual(
    lines.map((l) => [l.lineNumber, l.text, l.bytes]),
    [
      [1, '{"a":1}', 12],
      [2, "", 1],
      [3, '{"b":2}', 8],
      [4, '{"c":3}', 7],
    ],
  );
});

test("a line over the limit is reported without its text and the next line is read normally", async () => {
  const long = "x".repeat(100);
  const lines = await linesOf(`{"ok":1}\n${long}\n{"ok":2}\n${long}`, 50);
  assert.deepEqual(
    lines.map((l) => [l.lineNumber, l.text]),
    [
      [1, '{"ok":1}'],
      [2, undefined],
      [3, '{"ok":2}'],
      [4, undefined],
    ],
  );
});

test("multi-byte characters split across read chunks are decoded whole", async () => {
  const text = "é東".repeat(400_000); // > 1 MiB, so the line spans read chunks
  const lines = await linesOf(`${JSON.stringify({ t: text })}\n`);
  assert.equal(lines.length, 1);
  assert.equal((JSON.parse(lines[0]!.text!) as { t: string }).t, text);
});
