/**
 * Builds the contract of a revision: the contract files (main.tsp, tspconfig.yaml,
 * contract/) of a git commit or of the working tree are copied to a temporary directory
 * next to *this* checkout's generator (scripts/*.ts) and node_modules, and
 * scripts/generate.ts runs there with `--out`. Both sides are thus compiled by the same
 * toolchain, and a revision whose own scripts differ is still comparable.
 *
 * generate.ts compiles the main.tsp next to it (its root is fixed), which is why it is
 * run as a copy inside the export rather than imported; it runs in a child process so
 * the two sides build in parallel and a compiler crash stays contained.
 *
 * Results are cached by a hash of the contract files and of the toolchain, under
 * node_modules/.cache/contract-diff/ (a revision already seen costs nothing).
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { cp, mkdir, mkdtemp, readdir, readFile, rename, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** What makes up the contract of a revision. */
export const CONTRACT_PATHS = ["main.tsp", "tspconfig.yaml", "contract"];

/** Bump when the cached format or the build procedure changes. */
const CACHE_FORMAT = 1;

export type Revision = { kind: "git"; ref: string } | { kind: "worktree" };

export interface BuildOptions {
  /** The git repository whose revisions are compared. */
  repoRoot: string;
  /** The checkout providing scripts/generate.ts and node_modules (this one). */
  toolchainRoot: string;
  /** Where built revisions are cached; undefined disables the cache. */
  cacheDir?: string;
}

export interface BuiltContract {
  label: string;
  commit?: string;
  documents: { "3.1": string; "3.2": string };
  /** The .tsp sources by repository path, for linking changes to lines. */
  sources: Record<string, string>;
  fromCache: boolean;
}

/** The revision does not exist or its contract does not compile; `message` has the compiler's output. */
export class ContractBuildError extends Error {
  readonly label: string;
  constructor(label: string, message: string) {
    super(message);
    this.label = label;
  }
}

export function defaultCacheDir(toolchainRoot: string): string {
  return join(toolchainRoot, "node_modules", ".cache", "contract-diff");
}

async function git(repoRoot: string, args: string[]): Promise<string> {
  const { stdout } = await run("git", args, { cwd: repoRoot, maxBuffer: 64 * 1024 * 1024, encoding: "utf8" });
  return stdout;
}

async function gitBuffer(repoRoot: string, args: string[]): Promise<Buffer> {
  const { stdout } = await run("git", args, { cwd: repoRoot, maxBuffer: 64 * 1024 * 1024, encoding: "buffer" });
  return stdout;
}

/** The files of the contract: path → content. */
async function contractFiles(
  revision: Revision,
  repoRoot: string,
  label: string,
): Promise<{ files: Map<string, Buffer>; commit?: string }> {
  if (revision.kind === "worktree") {
    const files = new Map<string, Buffer>();
    for (const path of CONTRACT_PATHS) await collect(join(repoRoot, path), repoRoot, files);
    const commit = (await git(repoRoot, ["rev-parse", "--verify", "--quiet", "HEAD"]).catch(() => "")).trim();
    return commit === "" ? { files } : { files, commit };
  }
  let commit: string;
  try {
    commit = (await git(repoRoot, ["rev-parse", "--verify", "--quiet", `${revision.ref}^{commit}`])).trim();
  } catch {
    throw new ContractBuildError(label, `unknown git revision: ${revision.ref}`);
  }
  const listing = await git(repoRoot, ["ls-tree", "-r", "-z", commit, "--", ...CONTRACT_PATHS]);
  const files = new Map<string, Buffer>();
  for (const entry of listing.split("\0").filter((e) => e !== "")) {
    const [meta, path] = entry.split("\t") as [string, string];
    const [, type, hash] = meta.split(" ");
    if (type === "blob" && hash !== undefined) files.set(path, await gitBuffer(repoRoot, ["cat-file", "blob", hash]));
  }
  return { files, commit };
}

async function collect(path: string, root: string, into: Map<string, Buffer>): Promise<void> {
  if (!existsSync(path)) return;
  const entries = await readdir(path, { withFileTypes: true }).catch(() => undefined);
  if (entries === undefined) {
    into.set(relative(root, path).split("\\").join("/"), await readFile(path));
    return;
  }
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name)))
    await collect(join(path, entry.name), root, into);
}

/** What else decides the output: the generator scripts and the compiler packages' versions. */
async function toolchainFingerprint(toolchainRoot: string): Promise<string> {
  const hash = createHash("sha256").update(`format ${CACHE_FORMAT}\nnode ${process.version}\n`);
  const scripts = join(toolchainRoot, "scripts");
  for (const name of (await readdir(scripts)).filter((n) => n.endsWith(".ts")).sort()) {
    hash.update(`${name}\n`).update(await readFile(join(scripts, name)));
  }
  const modules = join(toolchainRoot, "node_modules");
  const packages = [
    "yaml",
    "openapi-typescript",
    ...(await readdir(join(modules, "@typespec")).catch(() => [])).map((n) => `@typespec/${n}`),
  ];
  for (const name of packages.sort()) {
    const manifest = await readFile(join(modules, name, "package.json"), "utf8").catch(() => "{}");
    hash.update(`${name}@${(JSON.parse(manifest) as { version?: string }).version ?? "?"}\n`);
  }
  return hash.digest("hex");
}

function cacheKey(files: Map<string, Buffer>, toolchain: string): string {
  const hash = createHash("sha256").update(toolchain);
  for (const [path, content] of [...files].sort(([a], [b]) => a.localeCompare(b))) {
    hash.update(`\n${path}\n${content.length}\n`).update(content);
  }
  return hash.digest("hex").slice(0, 32);
}

function sourcesOf(files: Map<string, Buffer>): Record<string, string> {
  return Object.fromEntries([...files].filter(([p]) => p.endsWith(".tsp")).map(([p, c]) => [p, c.toString("utf8")]));
}

export async function buildRevision(revision: Revision, options: BuildOptions): Promise<BuiltContract> {
  const label = revision.kind === "git" ? revision.ref : "working tree";
  const { files, commit } = await contractFiles(revision, options.repoRoot, label);
  if (!files.has("main.tsp")) throw new ContractBuildError(label, `${label} has no main.tsp`);
  const key = cacheKey(files, await toolchainFingerprint(options.toolchainRoot));
  const cacheFile = options.cacheDir === undefined ? undefined : join(options.cacheDir, `${key}.json`);
  const base = { label, ...(commit !== undefined ? { commit } : {}), sources: sourcesOf(files) };
  if (cacheFile !== undefined && existsSync(cacheFile)) {
    const documents = JSON.parse(await readFile(cacheFile, "utf8")) as BuiltContract["documents"];
    return { ...base, documents, fromCache: true };
  }
  const documents = await generateInExport(files, options.toolchainRoot, label);
  if (cacheFile !== undefined) {
    await mkdir(dirname(cacheFile), { recursive: true });
    const partial = `${cacheFile}.${process.pid}.tmp`;
    await writeFile(partial, JSON.stringify(documents));
    await rename(partial, cacheFile);
  }
  return { ...base, documents, fromCache: false };
}

async function generateInExport(
  files: Map<string, Buffer>,
  toolchainRoot: string,
  label: string,
): Promise<BuiltContract["documents"]> {
  const dir = await mkdtemp(join(tmpdir(), "contract-diff-"));
  try {
    for (const [path, content] of files) {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await writeFile(join(dir, path), content);
    }
    await cp(join(toolchainRoot, "scripts"), join(dir, "scripts"), {
      recursive: true,
      filter: (src) => !src.includes("node_modules"),
    });
    await writeFile(join(dir, "package.json"), JSON.stringify({ type: "module", private: true }));
    await symlink(join(toolchainRoot, "node_modules"), join(dir, "node_modules"), "dir");
    const out = join(dir, "out");
    try {
      await run(process.execPath, [join(dir, "scripts", "generate.ts"), "--out", out], {
        cwd: dir,
        maxBuffer: 64 * 1024 * 1024,
      });
    } catch (error) {
      const { stderr, stdout, message } = error as { stderr?: string; stdout?: string; message: string };
      const output = (stderr ?? "").trim() || (stdout ?? "").trim() || message;
      throw new ContractBuildError(label, output.split(dir + "/").join(""));
    }
    return {
      "3.1": await readFile(join(out, "openapi.3.1.yaml"), "utf8"),
      "3.2": await readFile(join(out, "openapi.3.2.yaml"), "utf8"),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
