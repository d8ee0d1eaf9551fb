/**
 * Builds the publishable package of the contract diff into a folder:
 *
 *   node tools/contract-diff/scripts/build.ts <outDir>
 *
 * `dist/` holds the JavaScript (tsc with tools/contract-diff/tsconfig.build.json) in the
 * repository's layout: `dist/tools/contract-diff/bin.js` (the `contract-diff` command, the
 * documents mode only: package-edition.ts) and `dist/common/node-version.js` (the Node check
 * it starts with); beside it the package's README, LICENSE and package.json.
 * Then `npx contract-diff --base-openapi … --head-openapi …` runs on plain Node.
 * `npm run build:packages` packs it with the others.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const DIFF = path.resolve(import.meta.dirname, "..");
const ROOT = path.resolve(DIFF, "../..");
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");

if (process.argv[2] === undefined) {
  console.error("usage: node tools/contract-diff/scripts/build.ts <outDir>");
  process.exit(2);
}
const out = path.resolve(process.argv[2]);
mkdirSync(out, { recursive: true });
rmSync(path.join(out, "dist"), { recursive: true, force: true });
const compiled = spawnSync(
  process.execPath,
  [tsc, "-p", path.join(DIFF, "tsconfig.build.json"), "--outDir", path.join(out, "dist")],
  { stdio: "inherit" },
);
if (compiled.status !== 0) process.exit(compiled.status ?? 1);
copyFileSync(path.join(ROOT, "LICENSE"), path.join(out, "LICENSE"));
for (const file of ["README.md", "package.json"]) copyFileSync(path.join(DIFF, file), path.join(out, file));
console.log(`built ${path.relative(process.cwd(), out) || "."}/dist`);
