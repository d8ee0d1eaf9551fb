/**
 * Builds the publishable package: `dist/` (JavaScript and declarations, compiled by tsc
 * with client/tsconfig.build.json) and `generated/api.d.ts`, the contract's types, which
 * the declarations import as `../generated/api.d.ts` just as the sources do from the repo.
 *
 *   node client/scripts/build.ts [outDir]    # default: client/ itself (what `npm pack` ships)
 *
 * A build tool, not part of the package: the only Node-specific file under client/.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const CLIENT = path.resolve(import.meta.dirname, "..");
const out = path.resolve(process.argv[2] ?? CLIENT);
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");

rmSync(path.join(out, "dist"), { recursive: true, force: true });
const compiled = spawnSync(
  process.execPath,
  [tsc, "-p", path.join(CLIENT, "tsconfig.build.json"), "--outDir", path.join(out, "dist")],
  { stdio: "inherit" },
);
if (compiled.status !== 0) process.exit(compiled.status ?? 1);
mkdirSync(path.join(out, "generated"), { recursive: true });
copyFileSync(path.join(CLIENT, "../generated/api.d.ts"), path.join(out, "generated/api.d.ts"));
console.log(`built ${path.relative(process.cwd(), out) || "."}/dist and generated/api.d.ts`);
