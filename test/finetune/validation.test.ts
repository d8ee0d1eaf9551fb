/** Dataset rows and whole-file validation: counts, the first bad line and its reason, keys, format. */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, test } from "vitest";
import { countTokens } from "../../server/inference/tokenizer.ts";
import { checkRow } from "../../server/datasets/rows.ts";
import { validateFile } from "../../server/datasets/validate-file.ts";

const dir = mkdtempSync(join(tmpdir(), "validation-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, lines: string[]): string {
  const path = join(dir, name);
  writeFileSync(path, lines.join("\n") + "\n");
  return path;
}

const sft = (q: string, a: string) =>
  JSON.stringify({
    messages: [
      { role: "user", content: q },
      { role: "assistant", content: a },
    ],
  });
const pref = (q: string, good: string, bad: string) =>
  JSON.stringify({
    input: { messages: [{ role: "user", content: q }] },
    preferred_output: [{ role: "assistant", content: good }],
    non_preferred_output: [{ role: "assistant", content: bad }],
  });

test("rows: each malformed shape is refused with a reason that names the field", () => {
  const reasons = [
    "{not json",
    "[1,2]",
    JSON.stringify({ text: "hi" }),
    JSON.stringify({ messages: [] }),
    JSON.stringify({ messages: [{ role: "user", content: "only a question" }] }),
    JSON.stringify({
      messages: [
        { role: "robot", content: "x" },
        { role: "assistant", content: "y" },
      ],
    }),
    JSON.stringify({
      messages: [
        { role: "user", content: 5 },
        { role: "assistant", content: "y" },
      ],
    }),
    JSON.stringify({
      input: { messages: [{ role: "user", content: "q" }] },
      preferred_output: [{ role: "assistant", content: "a" }],
    }),
    JSON.stringify({
      input: { messages: [{ role: "user", content: "q" }] },
      preferred_output: [{ role: "user", content: "a" }],
      non_preferred_output: [{ role: "assistant", content: "b" }],
    }),
  ].map((line) => {
    const check = checkRow(line);
    assert.equal(check.ok, false, line);
    return check.ok ? "" : check.reason;
  });
  assert.match(reasons[0] as string, /not valid JSON/);
  assert.match(reasons[2] as string, /"messages"/);
  assert.match(reasons[4] as string, /at least one assistant/);
  assert.match(reasons[5] as string, /messages\[0\]\.role/);
  assert.match(reasons[6] as string, /messages\[0\]\.content/);
  assert.match(reasons[7] as string, /non_preferred_output/);
  assert.match(reasons[8] as string, /preferred_output\[0\]\.role/);
});

test("a valid supervised file: counts, keys, format and exact token count", async () => {
  const result = await validateFile(file("sft.jsonl", [sft("Hi", "Hello!"), "", sft("2+2?", "4")]));
  assert.equal(result.totalLines, 2, "blank lines are not counted");
  assert.equal(result.validLines, 2);
  assert.equal(result.firstInvalidLine, undefined);
  assert.deepEqual(result.topLevelKeys, ["messages"]);
  assert.equal(result.format, "SFT");
  assert.equal(result.exampleCount, 2);
  const expected = ["Hi", "Hello!", "2+2?", "4"].reduce((s, t) => s + 3 + countTokens(t), 0);
  assert.equal(result.estimatedTokenCount, expected);
});

test("the first bad line is reported with its 1-based number; later rows are still counted", async () => {
  const result = await validateFile(file("bad.jsonl", [sft("a", "b"), '{"messages": "nope"}', sft("c", "d"), "oops"]));
  assert.deepEqual(result.firstInvalidLine, { lineNumber: 2, reason: '"messages" must be an array of messages' });
  assert.equal(result.totalLines, 4);
  assert.equal(result.validLines, 2);
});

test("preference rows are recognised; mixing formats makes the first odd row invalid", async () => {
  const ok = await validateFile(file("pref.jsonl", [pref("q", "good", "bad")]));
  assert.equal(ok.format, "PREFERENCE");
  assert.deepEqual(ok.topLevelKeys, ["input", "non_preferred_output", "preferred_output"]);
  const mixed = await validateFile(file("mixed.jsonl", [pref("q", "good", "bad"), sft("a", "b")]));
  assert.equal(mixed.firstInvalidLine?.lineNumber, 2);
  assert.match(mixed.firstInvalidLine?.reason ?? "", /one format/);
});

test("a large file's token count is estimated from a sample and stays close to the exact count", async () => {
  const lines = Array.from({ length: 400 }, (_, i) => sft(`question number ${i}`, "answer ".repeat(1 + (i % 7))));
  const path = file("large.jsonl", lines);
  const exact = await validateFile(path, { exactTokenRows: 1000 });
  const sampled = await validateFile(path, { exactTokenRows: 50 });
  assert.equal(sampled.validLines, 400);
  assert.ok(
    Math.abs(sampled.estimatedTokenCount - exact.estimatedTokenCount) / exact.estimatedTokenCount < 0.1,
    `${sampled.estimatedTokenCount} vs ${exact.estimatedTokenCount}`,
  );
});
