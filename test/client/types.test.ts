/**
 * The client's types reject wrong calls at compile time. types.fixture.ts holds calls
 * that must not compile, each under `// @ts-expect-error TSxxxx why`. The repository's
 * `tsc` run already fails if any of them compiles (an unused directive is an error);
 * this test compiles a copy with the directives removed and checks that every marked
 * line fails with exactly the code its directive names, and nothing else fails.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
const FIXTURE = path.join(import.meta.dirname, "types.fixture.ts");
const TSC = path.join(ROOT, "node_modules/typescript/bin/tsc");

test("each wrong call in the fixture is a compile error with the expected code", { timeout: 120_000 }, () => {
  const lines = readFileSync(FIXTURE, "utf8").split("\n");
  const expected = new Map<number, string>(); // 1-based line of the call → code
  const stripped = lines.map((line, i) => {
    const match = /^\s*\/\/ @ts-expect-error (TS\d+)\b/.exec(line);
    if (!match) return line;
    expected.set(i + 2, match[1] as string);
    return ""; // keep the line numbering
  });
  assert.ok(expected.size >= 10, "the fixture holds the cases");

  // A temp dir outside the repo, so a concurrent `tsc -p .` never sees the failing copy.
  // The copy is an .mts (an ES module wherever it lies) importing the client by absolute path.
  const dir = mkdtempSync(path.join(os.tmpdir(), "client-types-"));
  try {
    const copy = path.join(dir, "fixture.mts");
    writeFileSync(
      copy,
      stripped.join("\n").replaceAll('"../../client/index.ts"', JSON.stringify(path.join(ROOT, "client/index.ts"))),
    );
    writeFileSync(
      path.join(dir, "tsconfig.json"),
      JSON.stringify({
        extends: path.join(ROOT, "tsconfig.json"),
        compilerOptions: { typeRoots: [path.join(ROOT, "node_modules/@types")] },
        include: [],
        files: [copy],
      }),
    );
    const run = spawnSync(process.execPath, [TSC, "--noEmit", "--pretty", "false", "-p", dir], { encoding: "utf8" });
    const errors = new Map<number, string[]>();
    for (const m of run.stdout.matchAll(/^(.+?)\((\d+),\d+\): error (TS\d+):/gm)) {
      assert.equal(path.resolve(m[1] as string), copy, `an error outside the fixture: ${m[0]}`);
      const line = Number(m[2]);
      errors.set(line, [...(errors.get(line) ?? []), m[3] as string]);
    }
    for (const [line, code] of expected) {
      assert.deepEqual(errors.get(line), [code], `line ${line}: ${lines[line - 1]?.trim()}\n${run.stdout}`);
    }
    assert.deepEqual(
      [...errors.keys()].filter((line) => !expected.has(line)),
      [],
      `unexpected errors:\n${run.stdout}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
