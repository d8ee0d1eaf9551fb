/**
 * The kit against an implementation it was not written with: @dwmkerr/mock-llm (a dev
 * dependency, pinned), an OpenAI-compatible mock that serves chat completions and a model
 * list and nothing of the rest of the interface. With a chat-only profile the run must
 * finish (no hang, no crash), run nothing outside `implements`, and report each broken
 * rule once per step, each naming one rule, with the request that was sent.
 * docs/conformance-example-mock-llm.md keeps such a report as an example.
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, test } from "vitest";
import { fileURLToPath } from "node:url";
import { Contract, loadTranscripts, operationsOf, type RunReport } from "../../conformance/index.ts";
import { freePort } from "../../harness/listen.ts";

const CLI = fileURLToPath(new URL("../../conformance/cli.ts", import.meta.url));
const MOCK_LLM = createRequire(import.meta.url).resolve("@dwmkerr/mock-llm/dist/main.js");
const IMPLEMENTS = ["chat.completions", "models"];
const RUN_TIMEOUT_MS = 120_000;

let dir: string;
let mockLlm: ChildProcess | undefined;
let baseUrl: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "conformance-third-party-"));
  const port = await freePort();
  // Its working directory is the temp dir: mock-llm reads ./mock-llm.yaml when there is one.
  mockLlm = spawn(process.execPath, [MOCK_LLM], {
    cwd: dir,
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  await new Promise<void>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`mock-llm did not start: ${out}`)), 20_000);
    mockLlm?.stdout?.on("data", (c: Buffer) => {
      out += c.toString();
      if (/server running on/.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    });
    mockLlm?.on("exit", (code) => reject(new Error(`mock-llm exited with ${code}: ${out}`)));
  });
  baseUrl = `http://127.0.0.1:${port}/v1`;
});

afterAll(() => {
  mockLlm?.kill();
  rmSync(dir, { recursive: true, force: true });
});

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string; timedOut: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, RUN_TIMEOUT_MS);
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, timedOut });
    });
  });
}

test("a chat-only OpenAI-compatible server: the run finishes, runs only what it implements, and reports each broken rule once", async () => {
  const profile = {
    name: "mock-llm",
    baseUrl,
    implements: IMPLEMENTS,
    accounts: {
      primary: { id: "team-a", key: "sk-test-primary" },
      secondary: { id: "team-b", key: "sk-test-secondary" },
    },
    models: { chat: "gpt-4" },
    timeouts: { requestMs: 5000, pollMs: 5000, jobMs: 5000, pollIntervalMs: 50 },
  };
  const profileFile = path.join(dir, "chat-only.json");
  writeFileSync(profileFile, JSON.stringify(profile));
  const jsonFile = path.join(dir, "report.json");
  const junitFile = path.join(dir, "report.xml");
  const result = await run(["--profile", profileFile, "--json-report", jsonFile, "--junit", junitFile, "--no-color"]);

  assert.equal(result.timedOut, false, "the run hung");
  assert.equal(result.code, 8, `exit 8 (transcripts failed) expected\n${result.stdout}\n${result.stderr}`);
  assert.doesNotMatch(result.stderr, /\n\s+at /, "a stack trace: the kit crashed");
  const report = JSON.parse(readFileSync(jsonFile, "utf8")) as RunReport & {
    failuresByRule: { rule: string; count: number }[];
    byArea: { area: string }[];
  };

  // Exactly what the profile implements ran; the rest is "not implemented" and sent nothing.
  const contract = Contract.load();
  const implemented = new Set(["createChatCompletion", "listModels", "getModel"]);
  const byId = new Map(loadTranscripts().map((t) => [t.id, t]));
  const ran = report.details.filter((r) => r.status !== "not-implemented");
  assert.deepEqual(ran.map((r) => r.transcript).sort(), [
    "errors/unknown-path",
    "inference/chat-completions",
    "inference/chat-completions-stream",
    "inference/models",
  ]);
  for (const r of ran)
    for (const op of operationsOf(byId.get(r.transcript) as never, contract))
      assert.ok(implemented.has(op), `${r.transcript} calls ${op}`);
  assert.ok(report.details.filter((r) => r.status === "not-implemented").every((r) => r.requests === 0));
  const touched = contract.operations.map((o) => o.id).filter((id) => !report.coverage.operations.missing.includes(id));
  assert.deepEqual(
    touched.filter((id) => !implemented.has(id)),
    [],
    "a request reached an operation outside implements",
  );
  assert.equal(report.notImplemented, report.details.length - ran.length);
  assert.equal(report.passed + report.failed + report.skipped + report.notImplemented, report.details.length);

  // One failure per broken rule per step, each naming one rule, with the request sent.
  assert.ok(report.failures.length > 0);
  const keys = report.failures.map((f) => `${f.transcript} | ${f.step} | ${f.rule}`);
  assert.deepEqual(keys, [...new Set(keys)], "a rule reported twice at one step");
  for (const f of report.failures) {
    assert.ok(f.rule && !f.rule.includes(","), `one rule per failure: ${f.rule}`);
    assert.ok(!f.rule.startsWith("kit."), `the kit failed, not the implementation: ${f.message}`);
    assert.doesNotMatch(f.message, /TemplateError|is not defined/);
    assert.ok(f.exchange?.request.url.startsWith(baseUrl), `the request sent: ${JSON.stringify(f.exchange)}`);
  }
  // The x-request-id mock-llm never sends is one failure per step, not one per check that saw it.
  assert.equal(report.failures.filter((f) => f.rule === "headers.x-request-id").length, ran.length);
  assert.ok(report.failuresByRule.every((r) => r.count > 0));
  assert.match(result.stdout, /Failures by rule/);
  assert.match(result.stdout, /By area \(passed of those run\)/);
  assert.match(result.stdout, /\d+ passed, \d+ failed, \d+ skipped, \d+ not implemented/);
  assert.match(readFileSync(junitFile, "utf8"), /<skipped message="not implemented: calls /);
});

test("init against it writes a profile that implements what answers", async () => {
  const out = path.join(dir, "init.json");
  const result = await run(["init", "--base-url", baseUrl, "--account", "", "--key", "", "--out", out]);
  assert.equal(result.code, 0, result.stdout + result.stderr);
  const written = JSON.parse(readFileSync(out, "utf8"));
  assert.deepEqual(written.implements, ["models", "chat.completions"]);
  assert.equal(written.baseUrl, baseUrl);
  assert.equal(typeof written.models.chat, "string");
  assert.equal(written.accounts.primary.key, "env:CONFORMANCE_PRIMARY_KEY");
  assert.match(result.stdout, /responses: POST .*\/responses → 404, not implemented/);
});
