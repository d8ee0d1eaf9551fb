/**
 * `npm run contract:diff -- --base <git ref> [--head <git ref>]`: builds the contract of
 * both revisions (head defaults to the working tree), compares the generated OpenAPI
 * documents and reports every change with its rule, level and class. With
 * `--base-openapi`/`--head-openapi` it compares any team's OpenAPI 3.0/3.1/3.2 documents
 * instead (document/load.ts).
 *
 * Exit status: 0 nothing fails, 1 a breaking change at or above --fail-on (not ignored;
 * by default every change breaking for clients or implementations, WARN included),
 * 2 a revision does not build, or an input (arguments, ignore file, document) is invalid:
 * one line on stderr, never a stack trace.
 * See docs/contract-review.md.
 *
 * Installed as a package (`npx contract-diff`, bin.ts) it runs in another edition: the
 * documents mode only, since building TypeSpec revisions needs this repository.
 */
import { existsSync } from "node:fs";
import { isAbsolute, join, posix, resolve } from "node:path";
import { parseArgs } from "node:util";
import { buildRevision, ContractBuildError, defaultCacheDir, type BuiltContract, type Revision } from "./build.ts";
import { diffDocuments } from "./diff.ts";
import { DocumentError } from "./document/errors.ts";
import { documentFromText, loadDocument } from "./document/load.ts";
import { fileSystemSource, gitSource, isGitRevision } from "./document/sources.ts";
import { formatGithub, githubError } from "./format/github.ts";
import { formatJson } from "./format/json.ts";
import { COMMENT_MARKER, formatMarkdown } from "./format/markdown.ts";
import { formatText } from "./format/text.ts";
import { applyIgnores, IgnoreFileError, loadIgnoreFile } from "./ignore.ts";
import { describeBreaks, LEVELS, type Level } from "./model.ts";
import type { Doc } from "./openapi.ts";
import { fails, groupChanges, summarize, type FailFor, type Report } from "./report.ts";
import { RULES } from "./rules/catalog.ts";
import { linkSources, type Sources } from "./source-map.ts";

const toolchainRoot = resolve(import.meta.dirname, "..", "..");

export const USAGE = `Usage: npm run contract:diff -- --base <git ref> [options]

Builds the contract (main.tsp, contract/) of two revisions with this checkout's toolchain
and compares the generated OpenAPI documents.

  --base <ref>            base revision (required unless --base-openapi)
  --head <ref>            head revision (default: the working tree)
  --base-openapi <file>   compare this OpenAPI document (3.0, 3.1 or 3.2; YAML or JSON; its
                          relative $refs are read too) as the base instead of building;
                          <rev>:<path> reads it, and every file it refers to, from git
  --head-openapi <file>   the same for the head
  --format <f>            text (default), markdown (a PR comment), json or github
                          (workflow annotations on the .tsp line of each change)
  --strict-query-params   the implementations reject unknown query parameters (this repo's
                          server does): removing one breaks clients (ERR) instead of being
                          ignored (WARN)
  --date <YYYY-MM-DD>     the day sunset dates (x-sunset) are judged against (default: today)
  --fail-on <level>       WARN (default: every breaking change fails) or ERR (oasdiff's looser
                          policy: only definite breaks fail, WARN ones are reported)
  --fail-for <who>        any (default), clients or implementations
  --ignore-file <file>    reviewed exceptions (default: contract-diff-ignore.yaml at the repo root,
                          unless both sides are given as files)
  --document <v>          3.2 (default: carries the SSE events) or 3.1
  --repo-url <url>        link changes to https://…/blob/<commit>/<file>#L<line> (markdown)
  --repo <dir>            the git repository (default: this one)
  --no-cache              rebuild even if a revision was built before
  --cache-dir <dir>       where built revisions are kept (default: node_modules/.cache/contract-diff)
  --list-rules            print the rules (with --format) and exit
  -h, --help              this text

Exit status: 0 no failing change, 1 breaking changes found (by default any change breaking
for clients or implementations), 2 build failure or bad input.
`;

/**
 * Where the command runs. In this repository both modes work; installed as a package only
 * the documents one does (--base/--head build main.tsp with this checkout's scripts and
 * node_modules, which the package does not ship), with its own usage text.
 */
export interface Edition {
  usage: string;
  /** Whether --base/--head build the TypeSpec contract of a revision. */
  buildsContract: boolean;
}

export const REPOSITORY: Edition = { usage: USAGE, buildsContract: true };

/** The options that only make sense when building the TypeSpec contract. */
const CONTRACT_BUILD_OPTIONS = ["base", "head", "document", "no-cache", "cache-dir", "repo-url"] as const;

export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Whether stderr is a terminal: then the command says what it is building. */
  interactive?: boolean;
}

const processIo: Io = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  interactive: process.stderr.isTTY === true,
};

type Progress = (message: string) => void;

class UsageError extends Error {}

/** A TypeSpec-mode option where the contract cannot be built: one line, exit 2. */
class ContractBuildUnavailable extends Error {}

interface Options {
  base?: string;
  head?: string;
  baseOpenapi?: string;
  headOpenapi?: string;
  format: "text" | "markdown" | "json" | "github";
  strictQueryParams: boolean;
  date: string;
  failOn: Level;
  failFor: FailFor;
  ignoreFile?: string;
  document: "3.1" | "3.2";
  repoUrl?: string;
  repo: string;
  cacheDir?: string;
  listRules: boolean;
  help: boolean;
  cwd?: string;
}

function oneOf<T extends string>(name: string, value: string | undefined, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  const found = allowed.find((a) => a.toLowerCase() === value.toLowerCase());
  if (found === undefined) throw new UsageError(`--${name} must be one of ${allowed.join(", ")} (got ${value})`);
  return found;
}

export function parseOptions(argv: string[], cwd = process.cwd(), edition: Edition = REPOSITORY): Options {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        base: { type: "string" },
        head: { type: "string" },
        "base-openapi": { type: "string" },
        "head-openapi": { type: "string" },
        format: { type: "string" },
        "fail-on": { type: "string" },
        "fail-for": { type: "string" },
        "ignore-file": { type: "string" },
        document: { type: "string" },
        "repo-url": { type: "string" },
        repo: { type: "string" },
        "no-cache": { type: "boolean" },
        "cache-dir": { type: "string" },
        "list-rules": { type: "boolean" },
        "strict-query-params": { type: "boolean" },
        date: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
    }));
  } catch (error) {
    throw new UsageError((error as Error).message, { cause: error });
  }
  if (!edition.buildsContract) checkDocumentsOnly(values);
  // Installed, <rev>:<path> is read from the current directory's repository; here, from this one.
  const repo = resolve(cwd, values.repo ?? (edition.buildsContract ? toolchainRoot : cwd));
  const at = (file: string) => (isAbsolute(file) ? file : resolve(cwd, file));
  const options: Options = {
    format: oneOf("format", values.format, ["text", "markdown", "json", "github"], "text"),
    strictQueryParams: values["strict-query-params"] === true,
    date: values.date ?? new Date().toISOString().slice(0, 10),
    // Every change the report calls breaking fails by default; ERR alone is oasdiff's policy.
    failOn: oneOf("fail-on", values["fail-on"], ["ERR", "WARN"], "WARN"),
    failFor: oneOf("fail-for", values["fail-for"], ["any", "clients", "implementations"], "any"),
    // The repository's reviewed exceptions are about its own contract: by default they
    // apply when a side is built from it, not to two documents given as files.
    ignoreFile:
      values["ignore-file"] !== undefined
        ? at(values["ignore-file"])
        : values["base-openapi"] !== undefined && values["head-openapi"] !== undefined
          ? undefined
          : join(repo, "contract-diff-ignore.yaml"),
    document: oneOf("document", values.document, ["3.2", "3.1"], "3.2"),
    repo,
    listRules: values["list-rules"] === true,
    help: values.help === true,
  };
  if (values.base !== undefined) options.base = values.base;
  if (values.head !== undefined) options.head = values.head;
  if (values["base-openapi"] !== undefined) options.baseOpenapi = values["base-openapi"];
  if (values["head-openapi"] !== undefined) options.headOpenapi = values["head-openapi"];
  options.cwd = cwd;
  if (values["repo-url"] !== undefined) options.repoUrl = values["repo-url"];
  if (edition.buildsContract && values["no-cache"] !== true)
    options.cacheDir = values["cache-dir"] !== undefined ? at(values["cache-dir"]) : defaultCacheDir(toolchainRoot);
  if (!options.listRules && !options.help) requireSides(options, edition);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(options.date))
    throw new UsageError(`--date must be YYYY-MM-DD (got ${options.date})`);
  if (options.head !== undefined && options.headOpenapi !== undefined)
    throw new UsageError("give --head or --head-openapi, not both");
  if (options.base !== undefined && options.baseOpenapi !== undefined)
    throw new UsageError("give --base or --base-openapi, not both");
  return options;
}

/** Both sides must be named: built revisions (head: the working tree) or documents. */
function requireSides(options: Options, edition: Edition): void {
  if (!edition.buildsContract) {
    if (options.baseOpenapi === undefined || options.headOpenapi === undefined)
      throw new UsageError("--base-openapi <file> and --head-openapi <file> are both required");
  } else if (options.base === undefined && options.baseOpenapi === undefined) {
    throw new UsageError("--base <git ref> is required (or --base-openapi <file>)");
  }
}

/** Refuses what needs this repository's TypeSpec toolchain, saying what to use instead. */
function checkDocumentsOnly(values: Record<string, unknown>): void {
  const option = CONTRACT_BUILD_OPTIONS.find((name) => values[name] !== undefined);
  if (option === undefined) return;
  throw new ContractBuildUnavailable(
    `--${option}: building the TypeSpec contract of a revision needs the toolkit's repository (npm run contract:diff there); this package compares OpenAPI documents: --base-openapi <file or rev:path> --head-openapi <file or rev:path>`,
  );
}

export function formatRules(format: Options["format"]): string {
  if (format === "json" || format === "github") return `${JSON.stringify(RULES, null, 2)}\n`;
  if (format === "markdown") {
    const rows = RULES.map(
      (r) => `| \`${r.id}\` | ${r.level} | ${describeBreaks(r.breaks)} | ${r.description.replace(/\|/g, "\\|")} |`,
    );
    return `| Rule | Level | Class | Description |\n| --- | --- | --- | --- |\n${rows.join("\n")}\n\n${RULES.length} rules.\n`;
  }
  const width = Math.max(...RULES.map((r) => r.id.length));
  const lines = RULES.map(
    (r) => `${r.id.padEnd(width)}  ${r.level.padEnd(4)}  ${describeBreaks(r.breaks).padEnd(40)}  ${r.description}`,
  );
  const byLevel = LEVELS.map((level) => `${RULES.filter((r) => r.level === level).length} ${level}`).join(", ");
  return `${lines.join("\n")}\n\n${RULES.length} rules (${byLevel}).\n`;
}

interface Side {
  label: string;
  /** The OpenAPI version of a document given as a file. */
  version?: string;
  commit?: string;
  doc: Doc;
  sources: Sources;
}

/** `--base-openapi` as a file, or as `<rev>:<path>` read from git when no such file exists. */
async function loadOpenapiArgument(argument: string, options: Options): Promise<Side> {
  try {
    return await readOpenapiArgument(argument, options);
  } catch (error) {
    // Whatever a document does to the reader, it is an input problem: one line, exit 2.
    if (error instanceof DocumentError) throw error;
    throw new DocumentError(`${argument}: ${(error as Error).message}`, { cause: error });
  }
}

async function readOpenapiArgument(argument: string, options: Options): Promise<Side> {
  const cwd = options.cwd ?? process.cwd();
  const path = isAbsolute(argument) ? argument : resolve(cwd, argument);
  if (!existsSync(path)) {
    const colon = argument.indexOf(":");
    const revision = argument.slice(0, colon);
    if (colon > 0 && (await isGitRevision(options.repo, revision))) {
      const inRepository = posix.normalize(argument.slice(colon + 1)).replace(/^\.?\//, "");
      const loaded = await loadDocument(inRepository, gitSource(options.repo, revision));
      return { label: argument, version: loaded.version, doc: loaded.doc, sources: {} };
    }
  }
  const loaded = await loadDocument(path, fileSystemSource());
  return { label: argument, version: loaded.version, doc: loaded.doc, sources: {} };
}

async function loadSide(which: "base" | "head", options: Options, progress: Progress): Promise<Side> {
  const file = which === "base" ? options.baseOpenapi : options.headOpenapi;
  if (file !== undefined) return loadOpenapiArgument(file, options);
  const ref = which === "base" ? options.base : options.head;
  const revision: Revision = ref === undefined ? { kind: "worktree" } : { kind: "git", ref };
  const built: BuiltContract = await buildRevision(revision, {
    repoRoot: options.repo,
    toolchainRoot,
    ...(options.cacheDir !== undefined ? { cacheDir: options.cacheDir } : {}),
    onBuild: (label) => progress(`building the contract of ${label}…`),
  });
  const side: Side = {
    label: built.label,
    doc: documentFromText(built.documents[options.document], `${built.label} (generated)`),
    sources: built.sources,
  };
  if (built.commit !== undefined) side.commit = built.commit;
  return side;
}

function buildFailure(options: Options, error: ContractBuildError, io: Io): number {
  io.stderr(`contract of ${error.label} does not build:\n${error.message}\n`);
  if (options.format === "markdown") {
    io.stdout(
      `${COMMENT_MARKER}\n### Contract diff\n\n:x: The contract of \`${error.label}\` does not build:\n\n\`\`\`text\n${error.message}\n\`\`\`\n`,
    );
  } else if (options.format === "json") {
    io.stdout(`${JSON.stringify({ error: { revision: error.label, message: error.message } }, null, 2)}\n`);
  } else if (options.format === "github") {
    io.stdout(`${githubError(`The contract of ${error.label} does not build`, error.message)}\n`);
  }
  return 2;
}

/** `3.2` for built revisions; the declared versions of documents given as files (`3.0 → 3.1`). */
function documentVersions(base: Side, head: Side, options: Options): string {
  const [b, h] = [base.version ?? options.document, head.version ?? options.document];
  return b === h ? b : `${b} → ${h}`;
}

function inputFailure(error: DocumentError, io: Io): number {
  io.stderr(`contract-diff: ${error.message.split("\n")[0]}\n`);
  return 2;
}

export async function run(
  argv: string[],
  io: Io = processIo,
  cwd = process.cwd(),
  edition: Edition = REPOSITORY,
): Promise<number> {
  let options: Options;
  try {
    options = parseOptions(argv, cwd, edition);
  } catch (error) {
    if (error instanceof ContractBuildUnavailable) {
      io.stderr(`contract-diff: ${error.message}\n`);
      return 2;
    }
    if (!(error instanceof UsageError)) throw error;
    io.stderr(`${error.message}\n\n${edition.usage}`);
    return 2;
  }
  if (options.help) {
    io.stdout(edition.usage);
    return 0;
  }
  if (options.listRules) {
    io.stdout(formatRules(options.format));
    return 0;
  }
  let ignoreEntries;
  try {
    ignoreEntries = options.ignoreFile === undefined ? [] : loadIgnoreFile(options.ignoreFile);
  } catch (error) {
    if (!(error instanceof IgnoreFileError)) throw error;
    io.stderr(`${error.message}\n`);
    return 2;
  }
  let base: Side;
  let head: Side;
  const started = performance.now();
  const progress: Progress = io.interactive === true ? (message) => io.stderr(`${message}\n`) : () => {};
  try {
    [base, head] = await Promise.all([loadSide("base", options, progress), loadSide("head", options, progress)]);
  } catch (error) {
    if (error instanceof ContractBuildError) return buildFailure(options, error, io);
    if (error instanceof DocumentError) return inputFailure(error, io);
    throw error;
  }
  let diffed;
  try {
    diffed = diffDocuments(base.doc, head.doc, { strictQueryParams: options.strictQueryParams, date: options.date });
  } catch (error) {
    // A document shape no rule expected: still one line and exit 2, never a stack trace.
    return inputFailure(
      new DocumentError(`cannot compare the documents: ${(error as Error).message}`, { cause: error }),
      io,
    );
  }
  progress(`done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const changes = groupChanges(diffed);
  linkSources(changes, base, head);
  const unusedIgnores = applyIgnores(changes, ignoreEntries);
  const summary = summarize(changes, options.failOn, options.failFor);
  const report: Report = {
    base: { label: base.label, ...(base.commit !== undefined ? { commit: base.commit } : {}) },
    head: { label: head.label, ...(head.commit !== undefined ? { commit: head.commit } : {}) },
    document: documentVersions(base, head, options),
    failOn: options.failOn,
    failFor: options.failFor,
    changes,
    unusedIgnores,
    summary,
    failed: changes.some((c) => fails(c, options.failOn, options.failFor)),
    ruleCount: RULES.length,
    ...(options.repoUrl !== undefined ? { repoUrl: options.repoUrl } : {}),
  };
  const format = { text: formatText, markdown: formatMarkdown, json: formatJson, github: formatGithub }[options.format];
  io.stdout(format(report));
  return report.failed ? 1 : 0;
}

/** Runs the command on the process's arguments and sets its exit code. */
export function main(edition: Edition = REPOSITORY): void {
  run(process.argv.slice(2), processIo, process.cwd(), edition).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      // Not an input problem the loader names: still one line, exit 2.
      console.error(`contract-diff: ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = 2;
    },
  );
}

if (import.meta.main) main();
