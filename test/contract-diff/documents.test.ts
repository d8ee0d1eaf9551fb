/**
 * Reading documents from where they live (a git revision, `<rev>:<path>`, with every file
 * they refer to read at that revision), the workflow annotations of `--format github`,
 * and what the command says on a terminal.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "vitest";
import { run, type Io } from "../../tools/contract-diff/cli.ts";
import { formatGithub } from "../../tools/contract-diff/format/github.ts";
import { RULES } from "../../tools/contract-diff/rules/catalog.ts";
import type { Report } from "../../tools/contract-diff/report.ts";

const trees = "test/contract-diff/corpus/trees";
const repo = join(import.meta.dirname, "..", "..");

async function cli(args: string[], interactive = false): Promise<{ code: number; out: string; err: string }> {
  const captured = { out: "", err: "" };
  const io: Io = { stdout: (t) => void (captured.out += t), stderr: (t) => void (captured.err += t), interactive };
  const code = await run([...args, "--repo", repo], io, repo);
  return { code, ...captured };
}

test("<rev>:<path> reads a multi-file document, and the files it refers to, from that git revision", async () => {
  const { code, out, err } = await cli([
    ...["--base-openapi", `HEAD:${trees}/split-schemas/base/openapi.yaml`],
    ...["--head-openapi", `HEAD:${trees}/split-schemas/head/openapi.yaml`],
    "--format",
    "json",
  ]);
  assert.equal(err, "");
  assert.equal(code, 1);
  const report = JSON.parse(out) as { changes: { rule: string; message: string }[]; document: string };
  assert.deepEqual(
    report.changes.map((c) => `${c.rule}: ${c.message}`),
    ["request-max-length-decreased: maxLength 64 → 32"],
  );
  assert.equal(report.document, "3.1");
});

test("a <rev>:<path> that does not exist at that revision is one line and exit 2", async () => {
  const { code, err } = await cli(["--base-openapi", "HEAD:no/such/openapi.yaml", "--head-openapi", "HEAD:no/such/openapi.yaml"]);
  assert.equal(code, 2);
  assert.match(err, /^contract-diff: cannot read HEAD:no\/such\/openapi\.yaml: no such file at that revision\n$/);
});

test("documents of different versions are named as such in the report", async () => {
  const { out } = await cli([
    ...["--base-openapi", `${trees}/json-30-split/base/openapi.json`],
    ...["--head-openapi", `${trees}/split-schemas/head/openapi.yaml`],
  ]);
  assert.match(out, /OpenAPI 3\.0 → 3\.1 documents/);
});

test("on a terminal it says how long the comparison took; off a terminal stderr stays empty", async () => {
  const args = ["--base-openapi", `${trees}/split-schemas/base/openapi.yaml`, "--head-openapi", `${trees}/split-schemas/base/openapi.yaml`];
  assert.match((await cli(args, true)).err, /^done in \d+\.\d s\n$/);
  assert.equal((await cli(args, false)).err, "");
});

const rule = (id: string) => RULES.find((r) => r.id === id)!;

function reportWith(changes: Report["changes"]): Report {
  return {
    base: { label: "main", commit: "a".repeat(40) },
    head: { label: "working tree" },
    document: "3.2",
    failOn: "WARN",
    failFor: "any",
    changes,
    unusedIgnores: [],
    summary: { breakingForClients: 1, breakingForImplementations: 0, compatible: 1, ignored: 0, failing: 1 },
    failed: true,
    ruleCount: RULES.length,
  };
}

test("--format github: an error on the .tsp line of a failing change, a notice for a compatible one, data escaped", () => {
  const text = formatGithub(
    reportWith([
      {
        rule: rule("request-max-length-decreased"),
        message: "maxLength 64 → 32, 100% sure\nreally",
        where: "Dataset.name",
        occurrences: [],
        source: { revision: "head", file: "contract/datasets.tsp", line: 42 },
      },
      {
        rule: rule("path-removed"),
        message: "path removed",
        where: "GET /v1/old",
        occurrences: [],
        source: { revision: "base", file: "contract/old.tsp", line: 7 },
      },
      { rule: rule("path-added"), message: "path added", where: "GET /v1/new", occurrences: [] },
    ]),
  );
  const lines = text.trim().split("\n");
  assert.equal(
    lines[0],
    "::error file=contract/datasets.tsp,line=42,title=ERR request-max-length-decreased::Dataset.name: maxLength 64 → 32, 100%25 sure%0Areally (breaking for clients).",
  );
  assert.equal(
    lines[1],
    "::error file=contract/old.tsp,line=7,title=ERR path-removed::GET /v1/old: path removed (breaking for clients) (line in the base revision).",
  );
  assert.equal(lines[2], "::notice title=INFO path-added::GET /v1/new: path added (compatible).");
  assert.match(lines[3]!, /^Contract diff: 1 breaking for clients/);
});

test("the README's example runs as written and prints what the README shows", async () => {
  const readme = readFileSync(join(repo, "README.md"), "utf8");
  const block = readme.slice(
    readme.indexOf("<!-- contract-diff-example:start -->"),
    readme.indexOf("<!-- contract-diff-example:end -->"),
  );
  const [command, ...shown] = block.split("\n").slice(2, -2);
  const args = command!.replace("$ npm run --silent contract:diff -- ", "").split(" ");
  const { code, out } = await cli(args);
  assert.equal(code, 1);
  assert.equal(out, `${shown.join("\n")}\n`);
});
