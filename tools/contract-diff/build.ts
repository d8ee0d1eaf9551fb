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
 * Results (documents and .tsp sources) are cached under node_modules/.cache/contract-diff/
 * by the git blob ids of the contract files and a hash of the toolchain: a revision
 * already seen costs one `git ls-tree`, and a working tree equal to a commit hits the
 * commit's entry.
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
const CACHE_FORMAT = 2;

export type Revision = { kind: "git"; ref: string } | { kind: "worktree" };

export interface BuildOptions {
  /** The git repository whose revisions are compared. */
  repoRoot: string;
  /** The checkout providing scripts/generate.ts and node_modules (this one). */
  toolchainRoot: string;
  /** Where built revisions are cached; undefined disables the cache. */
  cacheDir?: string;
  /** Called when a revision is not cached and is being compiled (for a progress line). */
  onBuild?: (label: string) => void;
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
  constructor(label: string, message: string, options?: { cause: unknown }) {
    super(message, options);
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

/** git's id of a blob: the worktree and a commit with the same file share a cache entry. */
function blobId(content: Buffer): string {
  return createHash("sha1").update(`blob ${content.length}\0`).update(content).digest("hex");
}

interface ContractTree {
  /** path → blob id, which is all the cache key needs. */
  ids: Map<string, string>;
  /** Reads the files (only when the revision must be built). */
  files(): Promise<Map<string, Buffer>>;
  commit?: string;
}

/** The contract's files of a revision, by blob id, without reading a git blob yet. */
async function contractTree(revision: Revision, repoRoot: string, label: string): Promise<ContractTree> {
  if (revision.kind === "worktree") {
    const files = new Map<string, Buffer>();
    for (const path of CONTRACT_PATHS) await collect(join(repoRoot, path), repoRoot, files);
    const ids = new Map([...files].map(([path, content]) => [path, blobId(content)]));
    const commit = (await git(repoRoot, ["rev-parse", "--verify", "--quiet", "HEAD"]).catch(() => "")).trim();
    return { ids, files: async () => files, ...(commit === "" ? {} : { commit }) };
  }
  let commit: string;
  try {
    commit = (await git(repoRoot, ["rev-parse", "--verify", "--quiet", `${revision.ref}^{commit}`])).trim();
  } catch (error) {
    throw new ContractBuildError(label, `unknown git revision: ${revision.ref}`, { cause: error });
  }
  const listing = await git(repoRoot, ["ls-tree", "-r", "-z", commit, "--", ...CONTRACT_PATHS]);
  const ids = new Map<string, string>();
  for (const entry of listing.split("\0").filter((e) => e !== "")) {
    const [meta, path] = entry.split("\t") as [string, string];
    const [, type, hash] = meta.split(" ");
    if (type === "blob" && hash !== undefined) ids.set(path, hash);
  }
  const files = async () => {
    const result = new Map<string, Buffer>();
    for (const [path, hash] of ids) result.set(path, await gitBuffer(repoRoot, ["cat-file", "blob", hash]));
    return result;
  };
  return { ids, files, commit };
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

/** A revision as the terminal names it: its name, with its commit when the name is not already that commit. */
function buildLabel(label: string, commit: string | undefined): string {
  if (commit === undefined || commit.startsWith(label.toLowerCase())) return label;
  return `${label} (${commit.slice(0, 7)})`;
}

function cacheKey(ids: Map<string, string>, toolchain: string): string {
  const hash = createHash("sha256").update(toolchain);
  for (const [path, id] of [...ids].sort(([a], [b]) => a.localeCompare(b))) hash.update(`\n${path} ${id}`);
  return hash.digest("hex").slice(0, 32);
}

function sourcesOf(files: Map<string, Buffer>): Record<string, string> {
  return Object.fromEntries([...files].filter(([p]) => p.endsWith(".tsp")).map(([p, c]) => [p, c.toString("utf8")]));
}

export async function buildRevision(revision: Revision, options: BuildOptions): Promise<BuiltContract> {
  const label = revision.kind === "git" ? revision.ref : "working tree";
  const tree = await contractTree(revision, options.repoRoot, label);
  if (!tree.ids.has("main.tsp")) throw new ContractBuildError(label, `${label} has no main.tsp`);
  const key = cacheKey(tree.ids, await toolchainFingerprint(options.toolchainRoot));
  const cacheFile = options.cacheDir === undefined ? undefined : join(options.cacheDir, `${key}.json`);
  const identity = { label, ...(tree.commit !== undefined ? { commit: tree.commit } : {}) };
  if (cacheFile !== undefined && existsSync(cacheFile)) {
    const cached = JSON.parse(await readFile(cacheFile, "utf8")) as CacheEntry;
    return { ...identity, ...cached, fromCache: true };
  }
  // Both sides with the same contract (a branch without contract changes) build once.
  let building = inFlight.get(key);
  if (building === undefined) {
    options.onBuild?.(buildLabel(label, tree.commit));
    building = buildEntry(tree, options, label, cacheFile);
    inFlight.set(key, building);
    building.then(
      () => inFlight.delete(key),
      () => inFlight.delete(key),
    );
  }
  return { ...identity, ...(await building), fromCache: false };
}

const inFlight = new Map<string, Promise<CacheEntry>>();

async function buildEntry(
  tree: ContractTree,
  options: BuildOptions,
  label: string,
  cacheFile: string | undefined,
): Promise<CacheEntry> {
  const files = await tree.files();
  const entry: CacheEntry = {
    documents: await generateInExport(files, options.toolchainRoot, label),
    sources: sourcesOf(files),
  };
  if (cacheFile !== undefined) {
    await mkdir(dirname(cacheFile), { recursive: true });
    const partial = `${cacheFile}.${process.pid}.tmp`;
    await writeFile(partial, JSON.stringify(entry));
    await rename(partial, cacheFile);
  }
  return entry;
}

interface CacheEntry {
  documents: BuiltContract["documents"];
  sources: Record<string, string>;
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
      throw new ContractBuildError(label, output.split(dir + "/").join(""), { cause: error });
    }
    return {
      "3.1": await readFile(join(out, "openapi.3.1.yaml"), "utf8"),
      "3.2": await readFile(join(out, "openapi.3.2.yaml"), "utf8"),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
