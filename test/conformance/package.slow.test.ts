/**
 * The kit as a package of its own: built with conformance/scripts/build.ts, installed by
 * name beside a consumer, it runs on plain Node without type stripping — the CLI (what
 * `npx @inference-toolkit/conformance` starts) and the library — against the reference server.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, test } from "vitest";
import { nodeTooOld } from "../../common/node-version.ts";
import { buildTarballs, installBuiltPackage, userEnv, userProject } from "../support/package.ts";
import { startReferenceServer, type Reference } from "../../harness/conformance-reference.ts";

let scratch: string;
let pkg: string;
let ref: Reference;

beforeAll(async () => {
  ({ scratch, pkg } = installBuiltPackage("@inference-toolkit/conformance", "conformance/scripts/build.ts", [
    "ajv",
    "yaml",
    "eventsource-parser",
    "fast-check",
  ]));
  ref = await startReferenceServer();
});
afterAll(async () => {
  await ref?.close();
  rmSync(scratch, { recursive: true, force: true });
});

function node(args: string[], cwd = scratch): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--no-experimental-strip-types", ...args], {
      cwd,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (out += c.toString()));
    child.on("close", (code) => resolve({ code, out }));
  });
}

test("the package holds JavaScript, declarations, the contract and the transcripts", () => {
  for (const file of [
    "dist/cli.js",
    "dist/index.js",
    "dist/index.d.ts",
    "generated/openapi.3.2.yaml",
    "rules.yaml",
    "profiles/template.json",
    "transcripts/events/stream-text.yaml",
    "goldens/events/stream-text.yaml",
    "fixtures/sft-20.jsonl",
    "LICENSE",
  ]) {
    assert.ok(existsSync(path.join(pkg, file)), file);
  }
  const manifest = JSON.parse(readFileSync(path.join(pkg, "package.json"), "utf8"));
  assert.equal(manifest.bin.conformance, "./dist/bin.js");
  assert.equal(manifest.license, "Apache-2.0");
  assert.match(readFileSync(path.join(pkg, "dist/bin.js"), "utf8"), /^#!\/usr\/bin\/env node/);
  assert.match(readFileSync(path.join(pkg, "LICENSE"), "utf8"), /Apache License\s+Version 2\.0, January 2004/);
});

test("its CLI runs on plain Node against the reference server", async () => {
  const run = await node([
    path.join(pkg, "dist/bin.js"),
    "--base-url",
    ref.server.baseUrl,
    "--profile",
    path.join(pkg, "profiles/reference.json"),
    "--area",
    "events",
    "--no-color",
    "--html",
    path.join(scratch, "kit.html"),
  ]);
  assert.equal(run.code, 0, run.out);
  assert.match(run.out, /\d+ passed, 0 failed/);
  assert.match(readFileSync(path.join(scratch, "kit.html"), "utf8"), /<h2 id="by-area">/, "the kit's own HTML page");
});

test("its library is imported by name", async () => {
  const consumer = path.join(scratch, "consumer.mjs");
  writeFileSync(
    consumer,
    `import { loadProfile, runConformance } from "@inference-toolkit/conformance";
const profile = loadProfile(process.argv[2], { baseUrl: process.argv[3] });
const report = await runConformance({ profile, transcripts: ["responses/basic", "auth/missing-key"] });
console.log(JSON.stringify({ passed: report.passed, failed: report.failed }));
`,
  );
  const run = await node([consumer, path.join(pkg, "profiles/reference.json"), ref.server.baseUrl]);
  assert.equal(run.code, 0, run.out);
  assert.deepEqual(JSON.parse(run.out.trim().split("\n").at(-1) as string), { passed: 2, failed: 0 });
});

/**
 * As a person outside this repository gets it: the tarball of `npm run build:packages`
 * installed by npm into an empty directory under the system's temp folder, then the README's
 * own commands ("Validate your implementation": install, init, run) and its vitest file,
 * taken from the README text, against the reference server. The toolkit CLI's tarball
 * beside it runs the kit too. And the machine's Node 20, older than the kit declares, is
 * refused at start in one line.
 */
describe("installed from its tarball in an empty directory outside the repository", () => {
  const ROOT = path.resolve(import.meta.dirname, "../..");
  const README = readFileSync(path.join(ROOT, "README.md"), "utf8");
  const SECTION = README.slice(
    README.indexOf("\n## Validate your implementation\n"),
    README.indexOf("\n## ", README.indexOf("\n## Validate your implementation\n") + 5),
  );
  let app: string;
  let tarballs: string;
  const env = () =>
    userEnv({
      CONFORMANCE_PRIMARY_KEY: ref.server.keys.acme as string,
      CONFORMANCE_SECONDARY_ACCOUNT: "globex",
      CONFORMANCE_SECONDARY_KEY: ref.server.keys.globex as string,
    });

  beforeAll(() => {
    // The kit and the toolkit CLI with the client beside it: what this section installs.
    tarballs = buildTarballs("kit", ["conformance", "client", "cli"]);
    app = userProject("kit");
  }, 240_000);
  afterAll(() => {
    for (const dir of [app, tarballs]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  function tarball(name: string): string {
    const file = readdirSync(tarballs).find((f) => f.startsWith(`inference-toolkit-${name}-`));
    assert.ok(file, `no ${name} tarball in ${readdirSync(tarballs).join(", ")}`);
    return path.join(tarballs, file);
  }

  function shell(command: string, input = "", timeout = 300_000): Promise<{ code: number | null; out: string }> {
    return new Promise((resolve) => {
      const child = spawn("bash", ["-c", command], { cwd: app, env: env(), timeout });
      let out = "";
      child.stdout.on("data", (c: Buffer) => (out += c.toString()));
      child.stderr.on("data", (c: Buffer) => (out += c.toString()));
      child.stdin.end(input);
      child.on("close", (code) => resolve({ code, out }));
    });
  }

  test("the README's three commands take an empty directory to a report", { timeout: 600_000 }, async () => {
    const block = /```sh\n([\s\S]*?)```/.exec(SECTION)?.[1] ?? "";
    const commands = block.split("\n").filter((line) => line.trim() && !line.startsWith("#"));
    assert.equal(commands.length, 3, block);
    assert.match(commands[0] as string, /^npm install \S+conformance-0\.2\.0\.tgz$/);
    for (const line of commands) {
      const command = line
        .replace(/\S+\/inference-toolkit-conformance-[\d.]+\.tgz/, tarball("conformance"))
        .replace("https://api.example.com/v1", ref.server.baseUrl);
      // init asks the primary account (the key and the second account come from the environment).
      const run = await shell(command, command.includes(" init") ? "acme\n" : "");
      assert.equal(run.code, 0, `${command}\n${run.out}`);
      if (command.includes(" init")) assert.match(run.out, /models\.trainableBase: tiny-chat/);
    }
    const profile = JSON.parse(readFileSync(path.join(app, "reports/conformance-profile.json"), "utf8"));
    assert.equal(profile.accounts.secondary.id, "globex");
    assert.ok(profile.implements.includes("fineTuning.sft") && profile.implements.includes("fineTuning.dpo"));
    assert.equal(profile.models.trainableBase, "tiny-chat");
    assert.equal(readFileSync(path.join(app, "reports/.gitignore"), "utf8").trim().split("\n").at(-1), "*");
    const report = JSON.parse(readFileSync(path.join(app, "reports/conformance.json"), "utf8"));
    assert.equal(report.failed, 0);
    assert.ok(report.passed >= 50, `${report.passed} passed`);
    const trainable = report.details.filter((r: { transcript: string }) => r.transcript.startsWith("finetune/"));
    // All ran, but one that needs a setting init cannot detect (settings.checkpointingMs).
    assert.ok(
      trainable.every(
        (r: { status: string; reason?: string }) =>
          r.status === "passed" || (r.status === "skipped" && /settings\./.test(r.reason ?? "")),
      ),
      JSON.stringify(trainable.filter((r: { status: string }) => r.status !== "passed")),
    );
    assert.ok(
      trainable.filter((r: { status: string }) => r.status === "passed").length >= 15,
      "the fine-tuning transcripts ran",
    );
    assert.deepEqual(report.leftBehind, []);
  });

  test("the README's vitest file runs there as written", { timeout: 600_000 }, async () => {
    const snippet = /```ts\n([\s\S]*?)```/.exec(SECTION)?.[1] ?? "";
    const file = /^\/\/ (\S+\.test\.ts)$/m.exec(snippet)?.[1];
    assert.ok(file, snippet);
    assert.match(snippet, /process\.env\.CONFORMANCE_BASE_URL/);
    writeFileSync(path.join(app, file), snippet);
    // vitest itself from this repository, as the user's own devDependency would be.
    symlinkSync(path.join(ROOT, "node_modules/vitest"), path.join(app, "node_modules/vitest"));
    // No CONFORMANCE_BASE_URL: the profile's. Vitest sets BASE_URL itself, which the file must not read.
    const run = await shell(`npx vitest run ${file} --reporter=dot`);
    assert.equal(run.code, 0, run.out);
    const plain = run.out.replace(/\x1b\[[0-9;]*m/g, ""); // vitest colours its summary
    assert.match(plain, /Tests\s+\d+ passed \| \d+ skipped/);
    assert.doesNotMatch(plain, /failed/);
  });

  test(
    "the toolkit CLI's tarball installs beside it and runs the kit with an HTML report",
    { timeout: 600_000 },
    async () => {
      const install = await shell(`npm install ${tarball("client")} ${tarball("cli")}`);
      assert.equal(install.code, 0, install.out);
      // The client's tarball ships the shared resource names (common/) its dist/ imports.
      const names = await shell(
        `node --input-type=module -e 'import { parseResourceName } from "@inference-toolkit/client"; console.log(JSON.stringify(parseResourceName("accounts/acme/models/m1", "models")))'`,
      );
      assert.equal(names.code, 0, names.out);
      assert.match(names.out, /"acme"/);
      const run = await shell(
        `npx itk --base-url ${ref.server.baseUrl} conformance run --profile reports/conformance-profile.json --area events --html reports/cli.html`,
      );
      assert.equal(run.code, 0, run.out);
      assert.match(readFileSync(path.join(app, "reports/cli.html"), "utf8"), /<h2 id="by-area">/);
    },
  );

  const system = spawnSync("/usr/bin/node", ["--version"], { encoding: "utf8" });
  const old = system.status === 0 && nodeTooOld(system.stdout.trim());
  test.skipIf(!old)("an older Node (the machine's own) is refused at start in one line, exit 2", async () => {
    const child = spawnSync("/usr/bin/node", [path.join(app, "node_modules/.bin/conformance"), "run"], {
      cwd: app,
      encoding: "utf8",
      timeout: 30_000,
    });
    assert.equal(child.status, 2, child.stdout + child.stderr);
    assert.equal(child.stdout, "");
    assert.match(
      child.stderr,
      /^conformance: Node 20\.\d+\.\d+ is too old; the kit needs Node >= 22\.12\.0 \(its package\.json engines\)\. Run it with a newer node\.\n$/,
    );
  });

  test.skipIf(!old)(
    "the kit's request timeout holds on that Node after garbage collection (AbortSignal.any lost it there)",
    async () => {
      const script = path.join(app, "timeout-after-gc.mjs");
      writeFileSync(
        script,
        `import http from "node:http";
import { send } from "./node_modules/@inference-toolkit/conformance/dist/http.js";
const silent = http.createServer(() => {}).listen(0, "127.0.0.1");
await new Promise((r) => silent.once("listening", r));
const url = \`http://127.0.0.1:\${silent.address().port}/v1/models\`;
const gc = setInterval(() => globalThis.gc(), 50);
const guard = setTimeout(() => { console.log("hung"); process.exit(3); }, 8000);
const started = Date.now();
try { await send({ method: "GET", url, relativePath: "/models", apiPath: "/models", headers: {} }, 1000, new AbortController().signal); }
catch (e) { console.log(JSON.stringify({ error: e.name, ms: Date.now() - started })); }
clearTimeout(guard); clearInterval(gc); process.exit(0);
`,
      );
      const child = spawnSync("/usr/bin/node", ["--expose-gc", script], {
        cwd: app,
        encoding: "utf8",
        timeout: 20_000,
      });
      assert.equal(child.status, 0, child.stdout + child.stderr);
      const result = JSON.parse(child.stdout.trim());
      assert.equal(result.error, "TransportError");
      assert.ok(result.ms < 3000, `${result.ms} ms`);
    },
  );
});
