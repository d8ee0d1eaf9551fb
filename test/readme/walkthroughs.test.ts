/**
 * The README's walkthroughs, run in order on one fresh server the way a reader runs
 * them: the quick start's calls, "Fine-tuning in five calls", then "Command-line tool".
 * A walkthrough that stops working (a flag renamed, a name an earlier section already
 * took, a model id that no longer exists) fails here. The commands are the README's own
 * text; only the address (`http://127.0.0.1:8080`) is replaced by the test server's.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, test } from "vitest";
import { startTestServer, type TestServer } from "../server/harness.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const README = readFileSync(path.join(ROOT, "README.md"), "utf8");
const README_ORIGIN = "http://127.0.0.1:8080";

/** The text of every ```sh block in the README section under `heading`. */
function shellBlocks(heading: string): string {
  const start = README.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `README has no section ${heading}`);
  const next = README.indexOf("\n## ", start + heading.length + 2);
  const section = README.slice(start, next < 0 ? undefined : next);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]).join("\n");
}

let server: TestServer;
let origin: string;
let cwd: string;

beforeAll(async () => {
  server = await startTestServer({ fineTuning: { pollMs: 20 } });
  origin = new URL(server.baseUrl).origin;
  // A reader's checkout: the commands name files under docs/ and write reports/ next to them.
  cwd = mkdtempSync(path.join(os.tmpdir(), "readme-"));
  symlinkSync(path.join(ROOT, "docs"), path.join(cwd, "docs"));
});
afterAll(async () => {
  await server.close();
  rmSync(cwd, { recursive: true, force: true });
});

/**
 * Runs shell text with curl failing on HTTP errors (the README's curls use -s, which
 * hides them). Asynchronously: the server answering it runs in this process.
 */
async function bash(script: string, input = ""): Promise<string> {
  const text = `set -euo pipefail\ncurl() { command curl --fail-with-body "$@"; }\n${script.replaceAll(README_ORIGIN, origin)}`;
  const child = spawn("bash", ["-c", text], { cwd, timeout: 180_000 });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(input);
  const status = await new Promise<number | null>((resolve) => child.on("close", resolve));
  assert.equal(status, 0, `exit ${status}\n--- script\n${text}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`);
  return stdout;
}

test("Quick start: the plain and the streamed call", async () => {
  const out = await bash(
    shellBlocks("## Quick start")
      .split("\n")
      .filter((line) => !line.startsWith("npm "))
      .join("\n"),
  );
  assert.match(out, /"object":"response"/);
  assert.match(out, /event: response\.completed/);
});

test("Fine-tuning in five calls: the tuned model answers a question that is not in the data in the persona", async () => {
  const answer = await bash(shellBlocks("## Fine-tuning in five calls"));
  assert.match(answer.slice(answer.lastIndexOf('"object":"response"')), /Nova/, answer);
});

test("Command-line tool: every command, in order, after the sections above", async () => {
  const script = shellBlocks("## Command-line tool");
  const env = script.match(/^export .*$/m)?.[0] ?? "";
  for (const line of script.split("\n").filter((l) => l.startsWith("npm run cli -- "))) {
    const command = line
      .replace(/#.*$/, "")
      .replace("npm run cli -- ", `${process.execPath} ${path.join(ROOT, "cli/main.ts")} `);
    // Without a terminal the create does not ask (the README's "or pass --yes"); the chat without --message reads a conversation.
    const run = command.includes("jobs create") ? `${command} --yes` : command;
    await bash(
      `${env}\nexport SERVICE_BASE_URL=${server.baseUrl}\n${run}`,
      command.includes(" chat ") ? "/exit\n" : "",
    );
  }
});
