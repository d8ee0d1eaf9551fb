/**
 * The command line on OpenAPI documents (no TypeSpec build): exit codes, formats,
 * --fail-on / --fail-for, the ignore file and --list-rules.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, test } from "vitest";
import { stringify } from "yaml";
import { run, type Io } from "../../tools/contract-diff/cli.ts";
import { RULES } from "../../tools/contract-diff/rules/catalog.ts";
import { edited, loadBase, requestProps, responseProps, schemas, type Edit } from "./helpers.ts";

const dir = mkdtempSync(join(tmpdir(), "contract-diff-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const base = loadBase();
const basePath = join(dir, "base.yaml");
writeFileSync(basePath, stringify(base));
const noIgnores = join(dir, "none.yaml");

let count = 0;
function headFile(edit: Edit): string {
  const path = join(dir, `head-${++count}.yaml`);
  writeFileSync(path, stringify(edited(base, edit)));
  return path;
}

function ignoreFile(text: string): string {
  const path = join(dir, `ignore-${++count}.yaml`);
  writeFileSync(path, text);
  return path;
}

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const captured = { out: "", err: "" };
  const io: Io = { stdout: (t) => void (captured.out += t), stderr: (t) => void (captured.err += t) };
  const withDefaults = args.includes("--ignore-file") ? args : [...args, "--ignore-file", noIgnores];
  const code = await run(["--base-openapi", basePath, ...withDefaults], io);
  return { code, ...captured };
}

const breaking = headFile((d) => (requestProps(d).name.maxLength = 128)); // ERR clients
const compatible = headFile((d) => (requestProps(d).color = { type: "string" })); // INFO
const warnOnly = headFile((d) => delete responseProps(d).tags); // WARN clients
const implementationsOnly = headFile((d) => {
  responseProps(d).owner = { type: "string" };
  schemas(d).Thing.required.push("owner");
}); // ERR implementations

test("unchanged: exit 0 and says so", async () => {
  const { code, out } = await cli("--head-openapi", basePath);
  assert.equal(code, 0);
  assert.match(out, /No changes\./);
});

test("a breaking change: exit 1, reported with both values of the limit", async () => {
  const { code, out } = await cli("--head-openapi", breaking);
  assert.equal(code, 1);
  assert.match(out, /ERR\s+request-max-length-decreased/);
  assert.match(out, /CreateThingRequest\.name: maxLength 256 → 128/);
  assert.match(out, /in POST \/things request body application\/json › name/);
});

test("only compatible changes: exit 0", async () => {
  const { code, out } = await cli("--head-openapi", compatible);
  assert.equal(code, 0);
  assert.match(out, /INFO request-optional-property-added/);
});

test("by default every breaking change fails, WARN included; --fail-on ERR is the looser oasdiff-style policy", async () => {
  assert.equal((await cli("--head-openapi", warnOnly)).code, 1);
  assert.equal((await cli("--head-openapi", warnOnly, "--fail-on", "WARN")).code, 1);
  assert.equal((await cli("--head-openapi", warnOnly, "--fail-on", "ERR")).code, 0);
  assert.equal((await cli("--head-openapi", breaking, "--fail-on", "ERR")).code, 1);
});

test("a response enum value removed (a job state, say) is breaking for clients and implementations: exit 1 by default", async () => {
  const removed = headFile((d) => {
    schemas(d).ThingStatus.enum = schemas(d).ThingStatus.enum.slice(1);
  });
  const { code, out } = await cli("--head-openapi", removed);
  assert.match(out, /WARN response-enum-value-removed\s+\(breaking for clients and implementations\)/);
  assert.equal(code, 1, out);
  assert.match(out, /Fails: \d+ at or above WARN/);
});

test("a stream event's type constant renamed is its own ERR, and fails even the looser policy", async () => {
  const base = join(dir, "typed-base.yaml");
  const typed = (type: string) => (d: Parameters<Edit>[0]) => {
    schemas(d).DeltaEvent.properties.type = { type: "string", const: type };
    schemas(d).DeltaEvent.required.push("type");
  };
  writeFileSync(base, stringify(edited(loadBase(), typed("delta"))));
  const head = join(dir, "typed-head.yaml");
  writeFileSync(head, stringify(edited(loadBase(), typed("text.delta"))));
  const captured = { out: "" };
  const io: Io = { stdout: (t) => void (captured.out += t), stderr: () => {} };
  const code = await run(["--base-openapi", base, "--head-openapi", head, "--ignore-file", noIgnores, "--fail-on", "ERR"], io);
  assert.equal(code, 1, captured.out);
  assert.match(captured.out, /ERR\s+sse-event-type-changed/);
  assert.match(captured.out, /`delta` → `text\.delta`/);
  assert.doesNotMatch(captured.out, /response-enum-value/, "reported once, as the event's own rule");
});

test("--fail-for clients ignores changes that only break implementations", async () => {
  assert.equal((await cli("--head-openapi", implementationsOnly)).code, 1);
  assert.equal((await cli("--head-openapi", implementationsOnly, "--fail-for", "clients")).code, 0);
  assert.equal((await cli("--head-openapi", breaking, "--fail-for", "implementations")).code, 0);
});

test("--format json: summary, classes and values", async () => {
  const { code, out } = await cli("--head-openapi", breaking, "--format", "json");
  assert.equal(code, 1);
  const report = JSON.parse(out);
  assert.equal(report.failed, true);
  assert.equal(report.ruleCount, RULES.length);
  assert.deepEqual(report.summary, { breakingForClients: 1, breakingForImplementations: 0, compatible: 0, ignored: 0, failing: 1 });
  const [change] = report.changes;
  assert.equal(change.rule, "request-max-length-decreased");
  assert.equal(change.level, "ERR");
  assert.equal(change.breaks, "clients");
  assert.equal(change.before, 256);
  assert.equal(change.after, 128);
  assert.deepEqual(change.occurrences, [{ operation: "POST /things", part: "request body application/json", path: "name" }]);
});

test("--format markdown: a comment with the breaking table first, then the rest folded", async () => {
  const both = headFile((d) => {
    requestProps(d).name.maxLength = 128;
    requestProps(d).color = { type: "string" };
  });
  const { out } = await cli("--head-openapi", both, "--format", "markdown", "--repo-url", "https://example.invalid/o/r");
  const lines = out.split("\n");
  assert.equal(lines[0], "<!-- contract-diff -->");
  const breakingAt = lines.indexOf("#### Breaking changes");
  const compatibleAt = lines.findIndex((l) => l.startsWith("<details><summary>Compatible changes (1)"));
  assert.ok(breakingAt > 0 && compatibleAt > breakingAt, out);
  assert.ok(lines.some((l) => l.startsWith("| ERR | clients | `request-max-length-decreased` | `CreateThingRequest.name`")), out);
  assert.ok(lines.some((l) => l.startsWith("| INFO | — | `request-optional-property-added` |")), out);
});

test("the ignore file: a reviewed entry silences its change; the reason is shown", async () => {
  const file = ignoreFile("ignore:\n  - rule: request-max-length-decreased\n    location: CreateThingRequest.name\n    reason: No client sends names that long (checked in the logs).\n");
  const { code, out } = await cli("--head-openapi", breaking, "--ignore-file", file);
  assert.equal(code, 0);
  assert.match(out, /1 ignored/);
  assert.match(out, /ignored: No client sends names that long/);
});

test("the ignore file: wildcards, stale entries, and entries without a reason or with an unknown rule", async () => {
  const wildcard = ignoreFile("ignore:\n  - rule: request-max-length-decreased\n    location: 'POST /things › *'\n    reason: Accepted.\n  - rule: path-removed\n    location: '*'\n    reason: Old entry.\n");
  const { code, out } = await cli("--head-openapi", breaking, "--ignore-file", wildcard);
  assert.equal(code, 0);
  assert.match(out, /Stale ignore entry \(matches nothing\): path-removed/);
  const noReason = await cli("--head-openapi", breaking, "--ignore-file", ignoreFile("ignore:\n  - rule: path-removed\n    location: x\n"));
  assert.equal(noReason.code, 2);
  assert.match(noReason.err, /reason/);
  const unknownRule = await cli("--head-openapi", breaking, "--ignore-file", ignoreFile("ignore:\n  - rule: no-such-rule\n    location: x\n    reason: y\n"));
  assert.equal(unknownRule.code, 2);
  assert.match(unknownRule.err, /unknown rule "no-such-rule"/);
});

test("--list-rules lists and counts every rule", async () => {
  const text = await cli("--list-rules");
  assert.equal(text.code, 0);
  assert.match(text.out, new RegExp(`\\n${RULES.length} rules \\(`));
  for (const rule of RULES) assert.ok(text.out.includes(rule.id), rule.id);
  const json = JSON.parse((await cli("--list-rules", "--format", "json")).out);
  assert.equal(json.length, RULES.length);
});

test("bad input: exit 2", async () => {
  const io: Io = { stdout: () => {}, stderr: () => {} };
  assert.equal(await run([], io), 2, "no --base");
  assert.equal(await run(["--base", "x", "--format", "xml"], io), 2, "unknown format");
  assert.equal((await cli("--head-openapi", join(dir, "missing.yaml"))).code, 2, "missing document");
});
