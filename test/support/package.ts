/**
 * A package of this repository as an install leaves it: built by its own script into
 * `<scratch>/node_modules/<name>`, its dependencies linked beside it from this repository's
 * node_modules, so a consumer in `scratch` imports it by name.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "../..");

/** Builds `name` with `buildScript` (relative to the repository); returns the scratch folder and the package's folder. */
export function installBuiltPackage(
  name: string,
  buildScript: string,
  dependencies: string[],
): { scratch: string; pkg: string } {
  const scratch = mkdtempSync(path.join(os.tmpdir(), `${path.basename(name)}-package-`));
  const pkg = path.join(scratch, "node_modules", name);
  mkdirSync(pkg, { recursive: true });
  const built = spawnSync(process.execPath, [path.join(ROOT, buildScript), pkg], { encoding: "utf8" });
  assert.equal(built.status, 0, built.stdout + built.stderr);
  for (const dep of dependencies)
    symlinkSync(path.join(ROOT, "node_modules", dep), path.join(scratch, "node_modules", dep));
  return { scratch, pkg };
}
