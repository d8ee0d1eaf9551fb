/**
 * The README's walkthroughs and docs/cli.md's, run top to bottom the way a reader runs them,
 * TWICE on the same server: one shell per pass, as a reader who follows the README in one
 * terminal and then again. Every command block of Quick start, Fine-tuning in five calls,
 * Configuration (the admin block), Command-line tool and Typed client (the snippet saved as
 * hello.ts and run as the README says), then every block of docs/cli.md. A walkthrough that
 * stops working, or that cannot be run twice (an id a first run already took, an account
 * left suspended), fails here.
 *
 * The commands are the documents' own text, changed only where a reader's setup differs
 * from the test's: the address (`http://127.0.0.1:8080`) is the test server's; `npm run
 * cli --` and `npm run admin --` are the same files run by this Node directly (npm itself
 * adds a second of start-up per line); the admin command is pointed at the server's
 * DATA_DIR, and the CLI at the server (its default is `npm start`'s); `jobs create` answers its question with `--yes` (no terminal here, as the
 * README says); the interactive chat reads `/exit`.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, test } from "vitest";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";
import { DEV_CHECKPOINT_HOLD_MS } from "../../server/dev/checkpoint-hold.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const README = readFileSync(path.join(ROOT, "README.md"), "utf8");
const CLI_DOC = readFileSync(path.join(ROOT, "docs/cli.md"), "utf8");
const README_ORIGIN = "http://127.0.0.1:8080";

/** The section of `markdown` under `heading` (up to the next heading of the same level). */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `no section ${heading}`);
  const level = heading.split(" ")[0] as string;
  const next = markdown.indexOf(`\n${level} `, start + heading.length + 2);
  return markdown.slice(start, next < 0 ? undefined : next);
}

/** The text of every ```<lang> block of a section. */
function blocks(text: string, lang: string): string[] {
  return [...text.matchAll(new RegExp("```" + lang + "\\n([\\s\\S]*?)```", "g"))].map((m) => m[1] as string);
}

let server: TestServer;
let origin: string;
let cwd: string;

beforeAll(async () => {
  // As `npm start` serves the development seed (server/main.ts): with the fault models that
  // profiles/reference.json names, for the walkthroughs' conformance run,
  // and its first-checkpoint hold, which the profile's settings.checkpointingMs names.
  server = await startTestServer({
    devFaultModels: true,
    fineTuning: { pollMs: 20, checkpointHoldMs: DEV_CHECKPOINT_HOLD_MS },
  });
  origin = new URL(server.baseUrl).origin;
  // A reader's checkout: the commands name files under docs/, the snippet imports ./client/,
  // `node_modules/.bin/node` runs it, and reports/ is written next to them.
  cwd = mkdtempSync(path.join(os.tmpdir(), "readme-"));
  for (const entry of ["docs", "client", "node_modules"]) symlinkSync(path.join(ROOT, entry), path.join(cwd, entry));
});
afterAll(async () => {
  await server.close();
  rmSync(cwd, { recursive: true, force: true });
});

/** One line of a document's shell text as the test runs it (see the file's comment). */
function asRun(line: string): string {
  let run = line
    .replace(/^npm run cli -- /, `${process.execPath} ${path.join(ROOT, "cli/main.ts")} `)
    .replace(/^npm run admin -- /, `${process.execPath} ${path.join(ROOT, "server/admin/cli.ts")} `);
  if (/cli\/main\.ts jobs create /.test(run)) run = run.replace(/\s*(#.*)?$/, " --yes");
  if (/cli\/main\.ts chat /.test(run) && !run.includes("--message")) run = run.replace(/\s*(#.*)?$/, " <<< /exit");
  return run;
}

/** A document's shell text: starting the server and installing are the reader's, not the walkthrough's. */
function walkthrough(text: string): string {
  return text
    .split("\n")
    .filter((line) => !/^npm (ci|start)\b/.test(line))
    .map(asRun)
    .join("\n");
}

/**
 * Runs shell text in one bash, as a reader's terminal, with curl failing on HTTP errors
 * (the README's curls use -s, which hides them); asynchronously, since the server answering
 * it runs in this process. Each section's output starts with a `=== <section>` line.
 */
async function bash(script: string): Promise<string> {
  const text =
    `set -euo pipefail\ncurl() { command curl --fail-with-body "$@"; }\n` +
    `export DATA_DIR=${JSON.stringify(server.dataDir)} SERVICE_BASE_URL=${JSON.stringify(server.baseUrl)}\n` +
    script.replaceAll(README_ORIGIN, origin);
  const child = spawn("bash", ["-c", text], { cwd, timeout: 15 * 60_000 });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const status = await new Promise<number | null>((resolve) => child.on("close", resolve));
  assert.equal(status, 0, `exit ${status}\n--- script\n${text}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`);
  return stdout;
}

/** The output of one section, by its `=== ` marker. */
function outputOf(output: string, name: string): string {
  const start = output.indexOf(`=== ${name}\n`);
  assert.ok(start >= 0, `no output of ${name}`);
  const next = output.indexOf("\n=== ", start + 1);
  return output.slice(start, next < 0 ? undefined : next);
}

/** Every walkthrough, in the documents' order, as one reader's shell script. */
function readerScript(): string {
  const readme = (heading: string) => blocks(section(README, heading), "sh").join("\n");
  const snippet = blocks(section(README, "## Typed client"), "ts");
  assert.equal(snippet.length, 1, "one client snippet");
  writeFileSync(path.join(cwd, "hello.ts"), (snippet[0] as string).replaceAll(README_ORIGIN, origin));
  const cliDoc = blocks(CLI_DOC, "sh");
  assert.ok(cliDoc.length >= 2, "docs/cli.md's help block and walkthrough");
  const configuration = blocks(section(README, "## Configuration"), "sh");
  assert.equal(configuration.length, 1, "the admin block");
  return [
    ["Quick start", readme("## Quick start")],
    ["Fine-tuning in five calls", readme("## Fine-tuning in five calls")],
    ["Configuration", configuration[0]],
    ["Command-line tool", readme("## Command-line tool")],
    ["Typed client", readme("## Typed client")],
    ...cliDoc.map((block, i) => [`docs/cli.md ${i + 1}`, block]),
  ]
    .map(([name, text]) => `echo; echo "=== ${name}"\n${walkthrough(text as string)}`)
    .join("\n");
}

// Twice, on one server: what a reader does who runs it again. The ids of a pass are its own
// ($RUN); the kit's run of each pass sends about 1 500 requests within the same minute, which
// the dev seed's acme allows (6 000 a minute).
const PASSES = 2;

test(`the README and docs/cli.md, top to bottom, ${PASSES} times on one server`, { timeout: 40 * 60_000 }, async () => {
  const script = readerScript();
  for (let pass = 1; pass <= PASSES; pass++) {
    const started = performance.now();
    const output = await bash(script);
    const where = `pass ${pass}`;
    const quick = outputOf(output, "Quick start");
    assert.match(quick, /"object":"response"/, where);
    assert.match(quick, /event: response\.completed/, where);
    const tuned = outputOf(output, "Fine-tuning in five calls");
    assert.match(tuned.slice(tuned.lastIndexOf('"object":"response"')), /Nova/, `${where}: the persona\n${tuned}`);
    const admin = outputOf(output, "Configuration");
    assert.match(admin, /Created account demo-admin-\d+/, where);
    const states = [...admin.matchAll(/^demo-admin-\d+ +(active|SUSPENDED) /gm)].map((m) => m[1]);
    assert.deepEqual(states.slice(1, 3), ["SUSPENDED", "active"], `${where}: suspended, then undone\n${admin}`);
    assert.equal(states.at(-1), "active", `${where}: the block leaves its account active`);
    const cli = outputOf(output, "Command-line tool");
    assert.match(cli, /Output model: accounts\/acme\/models\/pirate-voice-\d+/, where);
    const client = outputOf(output, "Typed client");
    assert.match(
      client,
      /\S\n\{\n\s+input_tokens: \d+/,
      `${where}: the streamed text ends with a newline before the usage\n${client}`,
    );
    assert.match(outputOf(output, "docs/cli.md 2"), /Output model: accounts\/acme\/models\/pirate-voice-\d+/, where);
    console.log(`README pass ${pass}: ${Math.round((performance.now() - started) / 1000)} s`);
  }
});
