/**
 * The only tests that compile TypeSpec: a throwaway git repository holding two revisions
 * of a tiny contract (fixtures/tsp/v1 and v2), compared by the CLI as a reviewer would,
 * and a working tree that does not compile.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, test } from "vitest";
import { run, type Io } from "../../tools/contract-diff/cli.ts";
import { fixturesDir } from "./helpers.ts";

let repo: string;
let cacheDir: string;

function git(...args: string[]): void {
  execFileSync("git", ["-c", "user.name=test", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false", ...args], { cwd: repo, stdio: "pipe" });
}

function commitRevision(name: string): void {
  rmSync(join(repo, "contract"), { recursive: true, force: true });
  cpSync(join(fixturesDir, "tsp", name), repo, { recursive: true });
  git("add", "-A");
  git("commit", "-q", "-m", name);
  git("tag", name);
}

function capture(): Io & { out: string; err: string } {
  const io = { out: "", err: "", stdout: (t: string) => void (io.out += t), stderr: (t: string) => void (io.err += t) };
  return io;
}

beforeAll(() => {
  repo = mkdtempSync(join(tmpdir(), "contract-diff-repo-"));
  cacheDir = mkdtempSync(join(tmpdir(), "contract-diff-cache-"));
  git("init", "-q");
  commitRevision("v1");
  commitRevision("v2");
});

afterAll(() => {
  rmSync(repo, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
});

test("two revisions of a TypeSpec contract: built, compared, classified, linked to their lines, cached", async () => {
  const args = ["--repo", repo, "--base", "v1", "--head", "v2", "--format", "json", "--cache-dir", cacheDir];
  const io = capture();
  io.interactive = true;
  const code = await run(args, io);
  assert.equal(code, 1, io.err);
  // On a terminal it says what it builds.
  assert.match(io.err, /^building the contract of v1 \([0-9a-f]{7}\)…$/m);
  assert.match(io.err, /^building the contract of v2 \([0-9a-f]{7}\)…$/m);
  const report = JSON.parse(io.out);
  const found = report.changes.map((c: { level: string; breaks: string; rule: string; where: string }) => `${c.level} ${c.breaks} ${c.rule} ${c.where}`).sort();
  assert.deepEqual(found, [
    "ERR implementations response-required-property-added Thing.color",
    "INFO none path-added GET /things",
    "WARN clients response-optional-property-removed Thing.size",
    "WARN implementations response-max-length-decreased Thing.name",
  ]);
  const limit = report.changes.find((c: { rule: string }) => c.rule === "response-max-length-decreased");
  assert.deepEqual([limit.before, limit.after], [64, 32], "a changed limit carries both values");

  // Each change points at the .tsp line declaring it (the removed property: in the base).
  const v1 = readFileSync(join(fixturesDir, "tsp/v1/contract/things.tsp"), "utf8").split("\n");
  const v2 = readFileSync(join(fixturesDir, "tsp/v2/contract/things.tsp"), "utf8").split("\n");
  const source = (rule: string) => report.changes.find((c: { rule: string }) => c.rule === rule).source;
  assert.deepEqual(source("response-required-property-added"), { revision: "head", file: "contract/things.tsp", line: v2.findIndex((l) => l.includes("color:")) + 1 });
  assert.deepEqual(source("response-optional-property-removed"), { revision: "base", file: "contract/things.tsp", line: v1.findIndex((l) => l.includes("size?:")) + 1 });
  assert.deepEqual(source("path-added"), { revision: "head", file: "contract/things.tsp", line: v2.findIndex((l) => l.includes("op listThings")) + 1 });

  // Both revisions are now cached by content: the second run compiles nothing and says the same.
  const cached = readdirSync(cacheDir).filter((f) => f.endsWith(".json"));
  assert.equal(cached.length, 2);
  // A build always writes its cache file anew (a fresh inode by rename): unchanged files mean nothing compiled.
  const identity = () => cached.map((f) => { const s = statSync(join(cacheDir, f)); return `${s.ino}:${s.mtimeMs}`; });
  const before = identity();
  const again = capture();
  again.interactive = true;
  const started = performance.now();
  assert.equal(await run(args, again), 1);
  const seconds = (performance.now() - started) / 1000;
  assert.equal(again.out, io.out);
  assert.deepEqual(identity(), before, "a cached comparison does not compile");
  assert.doesNotMatch(again.err, /building/, "nothing to build, nothing said about building");
  assert.ok(seconds < 3, `a cached comparison takes under 3 s (took ${seconds.toFixed(1)} s)`);

  // The same revision on both sides, in text: nothing to report.
  const same = capture();
  assert.equal(await run(["--repo", repo, "--base", "v2", "--head", "v2", "--cache-dir", cacheDir], same), 0);
  assert.match(same.out, /No changes\./);
});

test("a working tree that does not compile: exit 2 with the compiler's message", async () => {
  writeFileSync(join(repo, "contract", "things.tsp"), "import \"@typespec/http\";\nnamespace Things;\nmodel Thing { id: strin; }\n");
  const io = capture();
  const code = await run(["--repo", repo, "--base", "v1", "--format", "markdown", "--no-cache"], io);
  assert.equal(code, 2);
  assert.match(io.err, /contract of working tree does not build/);
  assert.match(io.err, /strin/, "the compiler's diagnostic is shown");
  assert.match(io.out, /^<!-- contract-diff -->/, "the PR comment says so too");
  const unknown = capture();
  assert.equal(await run(["--repo", repo, "--base", "no-such-ref", "--no-cache"], unknown), 2);
  assert.match(unknown.err, /unknown git revision: no-such-ref/);
});
