/**
 * Runs every pair of the corpus (test/contract-diff/corpus/, see corpus.ts) through the
 * command line on real files: the exit code and every reported rule must be what the
 * pair expects, and input errors must be one line with exit 2. Then every base is
 * compared with another pair's head, which must never throw, each intent line is marked
 * `BC` exactly when the pair breaks clients, and the agreement with
 * oasdiff's documented levels must be the figure docs/contract-review.md shows.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, test } from "vitest";
import { stringify } from "yaml";
import { run, type Io } from "../../tools/contract-diff/cli.ts";
import { diffDocuments } from "../../tools/contract-diff/diff.ts";
import { prepareDocument } from "../../tools/contract-diff/document/load.ts";
import { findRule } from "../../tools/contract-diff/rules/catalog.ts";
import { agreement, loadCorpus, oursBreaking, type CorpusPair } from "./corpus.ts";

const dir = mkdtempSync(join(tmpdir(), "contract-diff-corpus-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const corpus = loadCorpus();
const noIgnores = join(dir, "no-ignore-file.yaml");

function write(pair: CorpusPair, side: "base" | "head"): string {
  if (pair.tree !== undefined) return join(pair.tree, side, `openapi.${pair.format}`);
  const path = join(dir, `${pair.name.replace(/\W/g, "_")}.${side}.${pair.format}`);
  const doc = pair[side]!;
  writeFileSync(path, pair.format === "json" ? JSON.stringify(doc, null, 2) : stringify(doc));
  return path;
}

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const captured = { out: "", err: "" };
  const io: Io = { stdout: (t) => void (captured.out += t), stderr: (t) => void (captured.err += t) };
  const code = await run(args, io);
  return { code, ...captured };
}

/** `LEVEL rule-id` of each change in a `--format json` report, sorted. */
function rulesOf(json: string): string[] {
  return (JSON.parse(json) as { changes: { rule: string; level: string }[] }).changes
    .map((c) => `${c.level} ${c.rule}`)
    .sort();
}

test("the corpus holds at least 200 pairs: 3.0 and 3.1, JSON and YAML, single and multi-file", () => {
  assert.ok(corpus.length >= 200, `${corpus.length} pairs`);
  for (const version of ["3.0", "3.1"]) assert.ok(corpus.some((p) => p.version === version), version);
  for (const format of ["json", "yaml"]) assert.ok(corpus.some((p) => p.format === format), format);
  assert.ok(corpus.filter((p) => p.tree !== undefined).length >= 8);
  assert.equal(new Set(corpus.map((p) => p.name)).size, corpus.length, "pair names are unique");
});

test("an intent line starts with `BC` exactly when the pair breaks clients, as oasdiff's `// BC:` lines", () => {
  const breaksClients = (pair: CorpusPair) =>
    pair.expect.some((e) => ["clients", "both"].includes(findRule(e.split(" ")[1]!)?.breaks ?? ""));
  const wrong = corpus
    .filter((p) => p.error === undefined && /^BC\b/.test(p.intent) !== breaksClients(p))
    .map((p) => `${p.name}: ${p.intent}`);
  assert.deepEqual(wrong, []);
});

for (const pair of corpus) {
  test(`${pair.name}: ${pair.intent}`, async () => {
    const [base, head] = [write(pair, "base"), write(pair, "head")];
    const options = ["--format", "json", "--ignore-file", noIgnores, "--date", "2026-06-01", ...pair.args];
    const { code, out, err } = await cli(["--base-openapi", base, "--head-openapi", head, ...options]);
    if (pair.error !== undefined) {
      assert.equal(code, 2, out);
      assert.match(err, new RegExp(pair.error));
      assert.equal(err.trim().split("\n").length, 1, `one line: ${err}`);
      return;
    }
    assert.equal(err, "");
    assert.deepEqual(rulesOf(out), [...pair.expect].sort());
    assert.equal(code, oursBreaking(pair) ? 1 : 0);
    if (pair.reverse === undefined) return;
    const backwards = await cli(["--base-openapi", head, "--head-openapi", base, ...options]);
    assert.deepEqual(rulesOf(backwards.out), [...pair.reverse].sort(), "head → base");
  });
}

test("no pairing of one pair's base with another's head throws", () => {
  const docs = corpus
    .filter((p) => p.base !== undefined && p.error === undefined)
    .map((p) => ({ base: structuredClone(p.base!), head: structuredClone(p.head!) }));
  for (const doc of docs) {
    prepareDocument(doc.base, "base");
    prepareDocument(doc.head, "head");
  }
  for (let i = 0; i < docs.length; i++) {
    const other = docs[(i * 7 + 3) % docs.length]!;
    diffDocuments(docs[i]!.base, other.head);
    diffDocuments(other.head, docs[i]!.base);
  }
});

test("docs/contract-review.md shows the agreement figure of this corpus", () => {
  const { pairs, failOnWarn, failOnErr, read, readFailOnWarn } = agreement(corpus);
  const percent = (n: number, of: number) => `${((100 * n) / of).toFixed(0)} %`;
  const doc = readFileSync(join(import.meta.dirname, "..", "..", "docs", "contract-review.md"), "utf8");
  const line = doc.split("\n").find((l) => l.startsWith("<!-- corpus-agreement -->")) ?? "";
  assert.equal(
    line,
    `<!-- corpus-agreement --> Agreement with oasdiff's documented levels on the ${pairs} judged pairs: ` +
      `**${failOnWarn} of ${pairs}** (${percent(failOnWarn, pairs)}) counting WARN as breaking on both sides, ` +
      `**${failOnErr} of ${pairs}** (${percent(failOnErr, pairs)}) counting only ERR; ` +
      `on the ${read} pairs whose change oasdiff's checkers read, **${readFailOnWarn} of ${read}** (${percent(readFailOnWarn, read)}) counting WARN.`,
  );
});

/** The corpus's make-up in one line, as docs/contract-review.md states it. */
function corpusShape(pairs: CorpusPair[]): string {
  const count = (keep: (p: CorpusPair) => boolean) => pairs.filter(keep).length;
  const families = new Map<string, number>();
  for (const p of pairs) families.set(p.name.split("/")[0]!, (families.get(p.name.split("/")[0]!) ?? 0) + 1);
  const byFamily = [...families]
    .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
    .map(([family, n]) => `${family} ${n}`)
    .join(", ");
  const declares32 = (p: CorpusPair) => String((p.base as { openapi?: unknown } | undefined)?.openapi).startsWith("3.2");
  return (
    `<!-- corpus-shape --> ${pairs.length} change pairs: ${count((p) => p.version === "3.0")} in OpenAPI 3.0 and ` +
    `${count((p) => p.version === "3.1")} in 3.1 (${count(declares32)} of them against 3.2), ` +
    `${count((p) => p.format === "json")} written as JSON, ${count((p) => p.tree !== undefined)} multi-file trees, ` +
    `${count((p) => p.error !== undefined)} inputs that must be refused, ${count((p) => p.reverse !== undefined)} also run backwards. ` +
    `By file: ${byFamily}.`
  );
}

test("docs/contract-review.md states the corpus's make-up as it is", () => {
  const doc = readFileSync(join(import.meta.dirname, "..", "..", "docs", "contract-review.md"), "utf8");
  const line = doc.split("\n").find((l) => l.startsWith("<!-- corpus-shape -->")) ?? "";
  assert.equal(line, corpusShape(corpus));
});
