/**
 * generated/ is committed and never edited by hand: it must be exactly what the contract
 * (main.tsp and contract/) compiles to today.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "vitest";
import { generateContract, type GeneratedFiles } from "../../scripts/generate.ts";
import { generatedDir } from "./openapi-walk.ts";

const FILES: (keyof GeneratedFiles)[] = ["openapi.3.1.yaml", "openapi.3.2.yaml", "api.d.ts", "contract-values.ts"];

// One compile serves the four comparisons; it writes nothing.
const regenerated = generateContract();
// A compile error is reported by each test below (they await it), not as an unhandled rejection.
regenerated.catch(() => {});

for (const name of FILES) {
  test(`generated/${name} is what the contract compiles to (not stale, not edited by hand)`, async () => {
    const fresh = (await regenerated)[name];
    const committed = await readFile(join(generatedDir, name), "utf8").catch(() => undefined);
    assert.ok(committed !== undefined, `generated/${name} is missing: run \`npm run generate\` and commit generated/`);
    // Compare without printing two large files: report the first line that differs.
    if (fresh !== committed) {
      const a = committed.split("\n");
      const b = fresh.split("\n");
      let line = 0;
      while (line < a.length && line < b.length && a[line] === b[line]) line++;
      assert.fail(
        `generated/${name} is stale: it differs from what main.tsp compiles to, first at line ${line + 1}\n` +
          `  committed:   ${JSON.stringify(a[line] ?? "(end of file)")}\n` +
          `  regenerated: ${JSON.stringify(b[line] ?? "(end of file)")}\n` +
          "Run `npm run generate` and commit generated/ together with the contract change.",
      );
    }
  });
}
