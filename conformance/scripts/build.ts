/**
 * Builds the publishable package of the conformance kit:
 *
 *   node conformance/scripts/build.ts [outDir]    # default: conformance/ itself (what `npm pack` ships)
 *
 * `dist/` holds the JavaScript and declarations (tsc with conformance/tsconfig.build.json);
 * beside it the data the kit reads: the contract (generated/openapi.3.2.yaml), and, when
 * building elsewhere than in place, the transcripts, goldens, fixtures, profiles and rules.
 * Then `npx @inference-toolkit/conformance --base-url … --profile …` runs on plain Node.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, cpSync, mkdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const KIT = path.resolve(import.meta.dirname, "..");
const out = path.resolve(process.argv[2] ?? KIT);
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");

rmSync(path.join(out, "dist"), { recursive: true, force: true });
const compiled = spawnSync(
  process.execPath,
  [tsc, "-p", path.join(KIT, "tsconfig.build.json"), "--outDir", path.join(out, "dist")],
  { stdio: "inherit" },
);
if (compiled.status !== 0) process.exit(compiled.status ?? 1);
mkdirSync(path.join(out, "generated"), { recursive: true });
copyFileSync(path.join(KIT, "../generated/openapi.3.2.yaml"), path.join(out, "generated/openapi.3.2.yaml"));
if (out !== KIT) {
  for (const dir of ["transcripts", "goldens", "fixtures", "profiles"])
    cpSync(path.join(KIT, dir), path.join(out, dir), { recursive: true });
  for (const file of ["rules.yaml", "README.md", "package.json"])
    copyFileSync(path.join(KIT, file), path.join(out, file));
}
console.log(`built ${path.relative(process.cwd(), out) || "."}/dist and generated/openapi.3.2.yaml`);
