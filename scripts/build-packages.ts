/**
 * Builds installable tarballs of the four packages anyone may use (Apache-2.0):
 *
 *   npm run build:packages [-- --scope @your-org] [--out dist-packages] [--only conformance]…
 *
 *   dist-packages/<scope>-conformance-<version>.tgz   the conformance kit (library, `conformance` command, vitest entry)
 *   dist-packages/<scope>-client-<version>.tgz        the typed client
 *   dist-packages/<scope>-cli-<version>.tgz           the `itk` command, with the client and the kit inside it
 *   dist-packages/<scope>-contract-diff-<version>.tgz the `contract-diff` command (OpenAPI documents)
 *
 * Each package is built into a staging folder by its own build script, given the LICENSE
 * and a manifest without the build-time scripts (and under `--scope` when given, to
 * publish under your own), then packed there with `npm pack`. `npm install <tarball>`
 * installs one anywhere; `npm publish <tarball>` publishes it.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";

const ROOT = path.resolve(import.meta.dirname, "..");
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");

interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  scripts?: Record<string, string>;
  bin?: Record<string, string>;
  files?: string[];
  dependencies?: Record<string, string>;
  [key: string]: unknown;
}

const { values } = parseArgs({
  options: {
    scope: { type: "string" },
    out: { type: "string", default: "dist-packages" },
    only: { type: "string", multiple: true },
  },
});
const scope = values.scope?.replace(/\/$/, "");
if (scope !== undefined && !/^@[a-z0-9][a-z0-9._-]*$/.test(scope)) {
  console.error(`build:packages: --scope must look like @your-org, not ${scope}`);
  process.exit(2);
}
/** Each package's name (for --only), its folder in this repository, and how it is built. */
const PACKAGES = [
  ["conformance", "conformance", buildWithOwnScript],
  ["client", "client", buildWithOwnScript],
  ["cli", "cli", buildCli],
  ["contract-diff", "tools/contract-diff", buildWithOwnScript],
] as const;
const unknown = values.only?.filter((name) => !PACKAGES.some(([known]) => known === name)) ?? [];
if (unknown.length > 0) {
  console.error(`build:packages: --only takes ${PACKAGES.map(([name]) => name).join(", ")}, not ${unknown.join(", ")}`);
  process.exit(2);
}
const out = path.resolve(values.out as string);
mkdirSync(out, { recursive: true });
const staging = mkdtempSync(path.join(os.tmpdir(), "build-packages-"));

try {
  for (const [name, source, build] of PACKAGES) {
    if (values.only && !values.only.includes(name)) continue;
    const dir = path.join(staging, name);
    mkdirSync(dir, { recursive: true });
    const manifest = build(source, dir);
    copyFileSync(path.join(ROOT, "LICENSE"), path.join(dir, "LICENSE"));
    writeFileSync(path.join(dir, "package.json"), `${JSON.stringify(published(manifest), null, 2)}\n`);
    console.log(`${pack(dir)}`);
  }
} finally {
  rmSync(staging, { recursive: true, force: true });
}

/** conformance/, client/ and tools/contract-diff/: their own build script into the folder, their manifest. */
function buildWithOwnScript(source: string, dir: string): Manifest {
  run(process.execPath, [path.join(ROOT, source, "scripts/build.ts"), dir]);
  const readme = path.join(ROOT, source, "README.md");
  try {
    copyFileSync(readme, path.join(dir, "README.md"));
  } catch {
    // A package without a README of its own ships none.
  }
  return readManifest(source);
}

/**
 * cli/: compiled with the client and the kit it imports (cli/tsconfig.build.json), in the
 * repository's layout, with the kit's data beside its code; one package to install.
 */
function buildCli(name: string, dir: string): Manifest {
  run(process.execPath, [tsc, "-p", path.join(ROOT, "cli/tsconfig.build.json"), "--outDir", dir]);
  const kit = path.join(ROOT, "conformance");
  for (const data of ["transcripts", "goldens", "fixtures", "profiles", "rules.yaml"])
    cpSync(path.join(kit, data), path.join(dir, "conformance", data), { recursive: true });
  copyFileSync(path.join(ROOT, "generated/openapi.3.2.yaml"), path.join(dir, "generated/openapi.3.2.yaml"));
  const manifest = readManifest(name);
  const dependencies = {
    ...readManifest("client").dependencies,
    ...readManifest("conformance").dependencies,
    ...manifest.dependencies,
  };
  return {
    ...manifest,
    bin: { itk: "./cli/main.js" },
    files: ["cli", "client", "common", "conformance", "generated", "LICENSE"],
    dependencies: Object.fromEntries(Object.entries(dependencies).sort(([a], [b]) => a.localeCompare(b))),
  };
}

function readManifest(name: string): Manifest {
  return JSON.parse(readFileSync(path.join(ROOT, name, "package.json"), "utf8")) as Manifest;
}

/** The manifest as published: no build scripts (the package is built), no private flag, the chosen scope. */
function published(manifest: Manifest): Manifest {
  const { scripts: _scripts, private: _private, ...rest } = manifest;
  const base = manifest.name.split("/").at(-1) as string;
  return { ...rest, name: scope ? `${scope}/${base}` : manifest.name, license: "Apache-2.0" };
}

/** `npm pack` in the folder; returns the tarball's path. */
function pack(dir: string): string {
  const npm = process.env.npm_execpath;
  const [command, args] = npm ? [process.execPath, [npm]] : ["npm", []];
  const packed = spawnSync(command, [...args, "pack", "--pack-destination", out, "--json"], {
    cwd: dir,
    encoding: "utf8",
  });
  if (packed.status !== 0) throw new Error(`npm pack in ${dir} failed:\n${packed.stdout}${packed.stderr}`);
  const [{ filename }] = JSON.parse(packed.stdout) as [{ filename: string }];
  return path.relative(process.cwd(), path.join(out, filename));
}

function run(command: string, args: string[]): void {
  const result = spawnSync(command, args, { stdio: ["ignore", "inherit", "inherit"] });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
