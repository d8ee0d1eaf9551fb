/**
 * Compiles a publishable package of this repository (client/, conformance/) with its
 * tsconfig.build.json, together with the shared modules its sources import at run time
 * (`../generated/contract-values.ts`, `../common/resource-names.ts`), into the layout the
 * package ships:
 *
 *   OUT/dist/…                              the package's own sources
 *   OUT/generated/contract-values.{js,d.ts} the contract's values, imported as ../generated/…
 *   OUT/generated/api.d.ts                  the contract's types, which those declarations import
 *   OUT/common/…                            what client, kit and server share (resource names),
 *                                           imported as ../common/… (when the package imports any)
 *
 * tsc compiles with the repository as its root (tsconfig.build.json's `rootDir: ".."`: a file
 * outside rootDir is an error), and the two trees are moved into place, so every relative
 * import stays as written in the sources.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "..");
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");

/** Builds `packageDir` into `out`; exits the process with tsc's status when it fails. */
export function compilePackage(packageDir: string, out: string): void {
  const scratch = mkdtempSync(path.join(os.tmpdir(), "package-build-"));
  try {
    const compiled = spawnSync(
      process.execPath,
      [tsc, "-p", path.join(packageDir, "tsconfig.build.json"), "--outDir", scratch],
      { stdio: "inherit" },
    );
    if (compiled.status !== 0) process.exit(compiled.status ?? 1);
    rmSync(path.join(out, "dist"), { recursive: true, force: true });
    cpSync(path.join(scratch, path.relative(ROOT, packageDir)), path.join(out, "dist"), { recursive: true });
    mkdirSync(path.join(out, "generated"), { recursive: true });
    cpSync(path.join(scratch, "generated"), path.join(out, "generated"), { recursive: true });
    rmSync(path.join(out, "common"), { recursive: true, force: true });
    if (existsSync(path.join(scratch, "common")))
      cpSync(path.join(scratch, "common"), path.join(out, "common"), { recursive: true });
    copyFileSync(path.join(ROOT, "generated/api.d.ts"), path.join(out, "generated/api.d.ts"));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
