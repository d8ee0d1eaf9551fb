/**
 * The contract diff as another team gets it: the tarball of `npm run build:packages --only
 * contract-diff`, installed by npm (with its registry dependency, yaml) into an empty
 * directory under the system's temp folder, outside this repository, and run there with
 * `npx contract-diff` on plain Node (the package is JavaScript):
 * - on the example pair of docs/examples/, it reports what this repository's own run reports
 *   (same exit code, same text, same changes in JSON);
 * - `<rev>:<path>` reads a multi-file document from a git repository the test makes;
 * - the TypeSpec mode (`--base <ref>`) is refused in one line, exit 2; its help describes the
 *   package's usage; the README's commands run as written; `--scope` renames it;
 * - the machine's older Node is refused at start in one line (as the kit's is).
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, test } from "vitest";
import { nodeTooOld } from "../../common/node-version.ts";
import { run, type Io } from "../../tools/contract-diff/cli.ts";
import { buildTarballs, userEnv, userProject } from "../support/package.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const PAIR = ["docs/examples/petstore-v1.yaml", "docs/examples/petstore-v2.yaml"];
/** The day sunsets are judged against, the same for both runs. */
const DATE = "2026-11-28";

let app: string;
let tarballs: string;

const env = () =>
  userEnv({
    GIT_AUTHOR_NAME: "Team",
    GIT_AUTHOR_EMAIL: "team@example.com",
    GIT_COMMITTER_NAME: "Team",
    GIT_COMMITTER_EMAIL: "team@example.com",
  });

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function shell(command: string, cwd = app, timeout = 300_000): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn("bash", ["-c", command], { cwd, env: env(), timeout, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** This repository's own command, in process, from the repository's root. */
async function repositoryRun(args: string[]): Promise<Ran> {
  let stdout = "";
  let stderr = "";
  const io: Io = { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) };
  const code = await run(args, io, ROOT);
  return { code, stdout, stderr };
}

beforeAll(async () => {
  tarballs = buildTarballs("diff", ["contract-diff"]);
  const tarball = readdirSync(tarballs).filter((f) => f.endsWith(".tgz"));
  assert.deepEqual(tarball, ["inference-toolkit-contract-diff-0.2.0.tgz"]);
  app = userProject("diff");
  const install = await shell(`npm install ${path.join(tarballs, tarball[0] as string)}`);
  assert.equal(install.code, 0, install.stdout + install.stderr);
  const installed = readdirSync(path.join(app, "node_modules")).filter((d) => !d.startsWith("."));
  assert.deepEqual(installed.sort(), ["@inference-toolkit", "yaml"], "only its registry dependency beside it");
  for (const file of PAIR) cpSync(path.join(ROOT, file), path.join(app, file));
}, 300_000);
afterAll(() => {
  for (const dir of [app, tarballs]) if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("installed from its tarball in an empty directory outside the repository", () => {
  const pair = ["--base-openapi", PAIR[0] as string, "--head-openapi", PAIR[1] as string, "--date", DATE];

  test("the example pair: the exit code and the report of this repository's own run, in every format", async () => {
    for (const format of ["text", "markdown", "github"]) {
      const args = [...pair, "--format", format];
      const [packaged, own] = await Promise.all([shell(`npx contract-diff ${args.join(" ")}`), repositoryRun(args)]);
      assert.equal(own.code, 1, own.stderr);
      assert.equal(packaged.code, own.code, packaged.stderr);
      assert.equal(packaged.stderr, "");
      assert.equal(packaged.stdout, own.stdout, format);
    }
    const text = await shell(`npx contract-diff ${pair.join(" ")}`);
    assert.match(text.stdout, /^Breaking changes \(7\)$/m);
  });

  test("--format json parses, with the same changes and summary as this repository's run", async () => {
    const [packaged, own] = await Promise.all([
      shell(`npx contract-diff ${pair.join(" ")} --format json`),
      repositoryRun([...pair, "--format", "json"]),
    ]);
    assert.equal(packaged.code, 1, packaged.stderr);
    const [mine, theirs] = [JSON.parse(packaged.stdout), JSON.parse(own.stdout)];
    const breaking = (report: { changes: { breaks: string }[] }) =>
      report.changes.filter((c) => c.breaks !== "none").length;
    assert.equal(breaking(mine), 7, JSON.stringify(mine.summary));
    assert.deepEqual(mine.changes, theirs.changes);
    assert.deepEqual(mine.summary, theirs.summary);
    assert.equal(mine.failed, true);
  });

  test("<rev>:<path> reads a multi-file document, $refs and all, from the current directory's git repository", async () => {
    const team = path.join(app, "team-api");
    mkdirSync(path.join(team, "schemas"), { recursive: true });
    writeFileSync(path.join(team, "openapi.yaml"), TEAM_DOCUMENT);
    writeFileSync(path.join(team, "schemas/pet.yaml"), petSchema(["id", "name"]));
    const first = await shell(
      "git init -q -b main && git add -A && git commit -qm v1 && git checkout -qb rename-field",
      team,
    );
    assert.equal(first.code, 0, first.stderr);
    // Only the referenced file changes: the response loses a required property.
    writeFileSync(path.join(team, "schemas/pet.yaml"), petSchema(["id"]));
    const second = await shell("git commit -qam v2", team);
    assert.equal(second.code, 0, second.stderr);

    const fromGit = await shell("npx contract-diff --base-openapi main:openapi.yaml --head-openapi HEAD:openapi.yaml", team);
    assert.equal(fromGit.code, 1, fromGit.stdout + fromGit.stderr);
    assert.match(fromGit.stdout, /^Contract diff: main:openapi\.yaml → HEAD:openapi\.yaml/);
    assert.match(fromGit.stdout, /ERR {2}response-required-property-removed[\s\S]*pet\.name/);
    // The working tree's file against a revision, and the repository named with --repo.
    const worktree = await shell(
      "npx contract-diff --repo team-api --base-openapi main:openapi.yaml --head-openapi team-api/openapi.yaml --format json",
    );
    assert.equal(worktree.code, 1, worktree.stderr);
    const report = JSON.parse(worktree.stdout);
    assert.deepEqual(
      report.changes.map((c: { rule: string }) => c.rule),
      ["response-required-property-removed"],
    );
    // A reviewed exception accepts it.
    writeFileSync(
      path.join(team, "accepted.yaml"),
      "ignore:\n  - rule: response-required-property-removed\n    location: pet.name\n    reason: no client reads it\n",
    );
    const accepted = await shell(
      "npx contract-diff --base-openapi main:openapi.yaml --head-openapi HEAD:openapi.yaml --ignore-file accepted.yaml",
      team,
    );
    assert.equal(accepted.code, 0, accepted.stdout + accepted.stderr);
    assert.match(accepted.stdout, /1 ignored/);
    // Nothing changed between two names of the same commit.
    const same = await shell("npx contract-diff --base-openapi main~0:openapi.yaml --head-openapi main:openapi.yaml", team);
    assert.equal(same.code, 0, same.stdout + same.stderr);
  });

  test("the TypeSpec mode is refused in one line, exit 2, saying what to use instead", async () => {
    for (const args of ["--base main", "--base main --head HEAD", "--base-openapi a.yaml --head HEAD"]) {
      const refused = await shell(`npx contract-diff ${args}`);
      assert.equal(refused.code, 2, args);
      assert.equal(refused.stdout, "", args);
      assert.match(
        refused.stderr,
        /^contract-diff: --(base|head): building the TypeSpec contract of a revision needs the toolkit's repository \(npm run contract:diff there\); this package compares OpenAPI documents: --base-openapi <file or rev:path> --head-openapi <file or rev:path>\n$/,
        args,
      );
    }
  });

  test("its help describes the package's usage, and a missing side is a usage error", async () => {
    const help = await shell("npx contract-diff --help");
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /^Usage: npx contract-diff --base-openapi <file\|rev:path> --head-openapi/);
    assert.match(help.stdout, /npx contract-diff --base-openapi main:openapi\.yaml --head-openapi openapi\.yaml/);
    assert.doesNotMatch(help.stdout, /npm run|--base <|--no-cache|--document/);
    const half = await shell(`npx contract-diff --base-openapi ${PAIR[0]}`);
    assert.equal(half.code, 2);
    assert.match(half.stderr, /^--base-openapi <file> and --head-openapi <file> are both required\n\nUsage: npx/);
    const rules = await shell("npx contract-diff --list-rules");
    assert.equal(rules.code, 0, rules.stderr);
    assert.match(rules.stdout, /\n\d+ rules \(\d+ INFO, \d+ WARN, \d+ ERR\)\.\n$/);
  });

  test("the README's three commands, as written, in another team's git repository", async () => {
    const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("\n## Reviewing contract changes\n"));
    const paragraph = section.slice(section.indexOf("**In another team's repository.**"));
    const block = /```sh\n([\s\S]*?)```/.exec(paragraph)?.[1] ?? "";
    const commands = block
      .split("\n")
      .map((line) => line.replace(/\s+#.*$/, ""))
      .filter((line) => line.trim());
    assert.equal(commands.length, 3, block);
    const [build, install, compare] = commands as [string, string, string];
    // The build is the one beforeAll ran (into a temp folder instead of dist-packages/).
    assert.equal(build, "npm run build:packages -- --only contract-diff");
    assert.match(block, /# here: dist-packages\/inference-toolkit-contract-diff-0\.2\.0\.tgz/);
    assert.match(install, /^npm install \S+\/dist-packages\/inference-toolkit-contract-diff-0\.2\.0\.tgz$/);

    const project = mkdtempSync(path.join(os.tmpdir(), "diff-project-"));
    try {
      writeFileSync(path.join(project, "openapi.yaml"), TEAM_DOCUMENT.replace('{ $ref: "./schemas/pet.yaml" }', INLINE_PET));
      const committed = await shell("git init -q -b main && git add openapi.yaml && git commit -qm v1", project);
      assert.equal(committed.code, 0, committed.stderr);
      writeFileSync(path.join(project, "openapi.yaml"), TEAM_DOCUMENT.replace('{ $ref: "./schemas/pet.yaml" }', "{ type: string }"));
      const installed = await shell(
        install.replace(/\S+\.tgz$/, path.join(tarballs, "inference-toolkit-contract-diff-0.2.0.tgz")),
        project,
      );
      assert.equal(installed.code, 0, installed.stdout + installed.stderr);
      const compared = await shell(compare, project);
      assert.equal(compared.code, 1, compared.stdout + compared.stderr);
      assert.match(compared.stdout, /^Contract diff: main:openapi\.yaml → openapi\.yaml \(OpenAPI 3\.1 documents/);
      assert.match(compared.stdout, /ERR  response-type-changed[^\n]*\n[^\n]*GET \/pets\/{petId} › response 200 application\/json: type object → string/);
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });

  test("--scope publishes it under another name, with the same command", () => {
    const scoped = mkdtempSync(path.join(os.tmpdir(), "diff-scoped-"));
    try {
      const built = spawnSync(
        process.execPath,
        [path.join(ROOT, "scripts/build-packages.ts"), "--out", scoped, "--only", "contract-diff", "--scope", "@acme"],
        { encoding: "utf8" },
      );
      assert.equal(built.status, 0, built.stdout + built.stderr);
      assert.deepEqual(readdirSync(scoped), ["acme-contract-diff-0.2.0.tgz"]);
      const manifest = spawnSync("tar", ["-xzOf", path.join(scoped, "acme-contract-diff-0.2.0.tgz"), "package/package.json"], {
        encoding: "utf8",
      });
      const { name, bin, license, engines, dependencies, private: hidden } = JSON.parse(manifest.stdout);
      assert.deepEqual(
        { name, bin, license, engines, dependencies, hidden },
        {
          name: "@acme/contract-diff",
          bin: { "contract-diff": "./dist/tools/contract-diff/bin.js" },
          license: "Apache-2.0",
          engines: { node: ">=22.12" },
          dependencies: { yaml: "2.9.1" },
          hidden: undefined,
        },
      );
    } finally {
      rmSync(scoped, { recursive: true, force: true });
    }
  });

  const system = spawnSync("/usr/bin/node", ["--version"], { encoding: "utf8" });
  const old = system.status === 0 && nodeTooOld(system.stdout.trim());
  test.skipIf(!old)("an older Node (the machine's own) is refused at start in one line, exit 2", () => {
    const child = spawnSync("/usr/bin/node", [path.join(app, "node_modules/.bin/contract-diff"), ...pair], {
      cwd: app,
      encoding: "utf8",
      timeout: 30_000,
    });
    assert.equal(child.status, 2, child.stdout + child.stderr);
    assert.equal(child.stdout, "");
    assert.match(
      child.stderr,
      /^contract-diff: Node 20\.\d+\.\d+ is too old; it needs Node >= 22\.12\.0 \(its package\.json engines\)\. Run it with a newer node\.\n$/,
    );
  });
});

const TEAM_DOCUMENT = `openapi: 3.1.0
info: { title: Team pets, version: 1.0.0 }
paths:
  /pets/{petId}:
    get:
      operationId: getPet
      parameters:
        - { name: petId, in: path, required: true, schema: { type: string } }
      responses:
        "200":
          description: The pet
          content:
            application/json:
              schema: { $ref: "./schemas/pet.yaml" }
`;

const INLINE_PET = "{ type: object, required: [id], properties: { id: { type: string } } }";

function petSchema(required: string[]): string {
  const properties = required.map((name) => `  ${name}: { type: string }`).join("\n");
  return `type: object\nrequired: [${required.join(", ")}]\nproperties:\n${properties}\n`;
}
