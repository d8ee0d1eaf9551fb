/**
 * A package of this repository as an install leaves it: built by its own script into
 * `<scratch>/node_modules/<name>`, its dependencies linked beside it from this repository's
 * node_modules, so a consumer in `scratch` imports it by name.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
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

/** `npm run build:packages` of the named packages into a new temporary folder; returns the folder. */
export function buildTarballs(prefix: string, only: string[]): string {
  const out = mkdtempSync(path.join(os.tmpdir(), `${prefix}-tarballs-`));
  const args = [
    path.join(ROOT, "scripts/build-packages.ts"),
    "--out",
    out,
    ...only.flatMap((name) => ["--only", name]),
  ];
  const built = spawnSync(process.execPath, args, { encoding: "utf8" });
  assert.equal(built.status, 0, built.stdout + built.stderr);
  return out;
}

/** An empty project outside this repository, as a user starts one: a folder with a bare package.json. */
export function userProject(prefix: string): string {
  const app = mkdtempSync(path.join(os.tmpdir(), `${prefix}-user-`));
  assert.match(path.relative(ROOT, app), /^\.\./, "the directory is outside the repository");
  writeFileSync(path.join(app, "package.json"), JSON.stringify({ private: true, type: "module" }));
  return app;
}

/**
 * The environment of a user's shell: the Node running this test first on PATH (npm's and
 * npx's `node`, as a user's one Node >= 22.12 would be), npm quiet and offline-first.
 */
export function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ""}`,
    npm_config_prefer_offline: "true",
    npm_config_audit: "false",
    npm_config_fund: "false",
    npm_config_update_notifier: "false",
    ...extra,
  };
}
