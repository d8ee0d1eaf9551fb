/** `npm run admin -- catalog list|check`, run as a process, as an operator checks a file before a restart. */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, test } from "vitest";
import { stringify as stringifyYaml } from "yaml";
import { DEFAULT_CATALOG_FILE } from "../../server/inference/catalog-file.ts";

const CLI = fileURLToPath(new URL("../../server/admin/cli.ts", import.meta.url));
const scratch = mkdtempSync(path.join(os.tmpdir(), "admin-catalog-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function admin(args: string[], env: Record<string, string> = {}) {
  // No store is opened: DATA_DIR points nowhere that exists.
  const result = spawnSync(process.execPath, [CLI, ...args], {
    env: { ...process.env, DATA_DIR: path.join(scratch, "no-such-dir"), ...env },
    encoding: "utf8",
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function catalogWith(edit: (c: { models: any[] }) => void): string {
  const catalog = JSON.parse(readFileSync(DEFAULT_CATALOG_FILE, "utf8"));
  edit(catalog);
  const file = path.join(scratch, `catalog-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(catalog));
  return file;
}

describe("catalog list", () => {
  test("lists the default catalogue's models with their limits, prices and trainers", () => {
    const { status, stdout } = admin(["catalog", "list"]);
    assert.equal(status, 0);
    const lines = stdout.trim().split("\n");
    assert.equal(lines.length, 3);
    assert.match(
      lines[0] as string,
      /^tiny-chat {2}window=16384 {2}maxOutput=256 {2}tools {2}price=0\.10\/M {2}trainable: trainer=local-lora rate=0\.50\/M$/,
    );
    assert.match(lines[2] as string, /^tiny-chat-community .* agreement=community-license-2026-01$/);
  });

  test("lists the file CATALOG_FILE names, an upstream trainer marked third-party", () => {
    const file = catalogWith((c) => {
      c.models[0].training.trainer = { type: "openai-fine-tuning", baseUrl: "https://ft.example/v1", model: "base-8b" };
    });
    const { status, stdout } = admin(["catalog", "list"], { CATALOG_FILE: file });
    assert.equal(status, 0);
    assert.match(stdout, /trainer=openai-fine-tuning \(third-party\)/);
  });
});

describe("catalog check", () => {
  test("the committed files are fine: exit 0", () => {
    const { status, stdout } = admin(["catalog", "check"]);
    assert.equal(status, 0);
    assert.match(stdout, /^OK: .*catalog\.json declares 3 models \(1 trainable\)/);
  });

  test("the README's example pair (docs/examples/providers) is fine: exit 0", () => {
    const dir = fileURLToPath(new URL("../../docs/examples/providers/", import.meta.url));
    const { status, stdout, stderr } = admin(["catalog", "check"], {
      CATALOG_FILE: path.join(dir, "catalog.json"),
      ROUTING_FILE: path.join(dir, "routing.json"),
      TRAINER_KEY: "set",
    });
    assert.equal(status, 0, stderr);
    assert.match(stdout, /declares 2 models \(1 trainable\)/);
    assert.doesNotMatch(stdout, /warning/);
  });

  test("a YAML catalogue (.yaml) is read as the same document; a YAML mistake names the file", () => {
    const catalog = JSON.parse(readFileSync(DEFAULT_CATALOG_FILE, "utf8"));
    const file = path.join(scratch, "catalog.yaml");
    writeFileSync(file, stringifyYaml(catalog));
    const listed = admin(["catalog", "list"], { CATALOG_FILE: file });
    assert.equal(listed.status, 0, listed.stderr);
    assert.equal(listed.stdout, admin(["catalog", "list"]).stdout, "the same models as the JSON file");
    // An unquoted price is a number in YAML: the schema names the field.
    writeFileSync(
      file,
      stringifyYaml(catalog).replace(/pricePerMillionTokens: "?0\.10"?/, "pricePerMillionTokens: 0.10"),
    );
    const unquoted = admin(["catalog", "check", file]);
    assert.equal(unquoted.status, 1);
    assert.match(unquoted.stderr, /model "tiny-chat" \(models\[0\]\): pricePerMillionTokens must be string/);
    writeFileSync(file, "models:\n  - id: [unclosed\n");
    const broken = admin(["catalog", "check", file]);
    assert.equal(broken.status, 1);
    assert.match(broken.stderr, /catalogue file .*catalog\.yaml: not YAML \(/);
  });

  test("a bad entry: exit 1, naming the entry and the field", () => {
    const file = catalogWith((c) => (c.models[2].pricePerMillionTokens = 5));
    const { status, stderr } = admin(["catalog", "check", file]);
    assert.equal(status, 1);
    assert.match(stderr, /model "tiny-chat-community" \(models\[2\]\): pricePerMillionTokens must be string/);
  });

  test("a routing file that is not JSON: exit 1, naming the file", () => {
    const routing = path.join(scratch, "routing-typo.json");
    writeFileSync(routing, "{ version: 1 }");
    const { status, stderr } = admin(["catalog", "check"], { ROUTING_FILE: routing });
    assert.equal(status, 1);
    assert.match(stderr, /routing file .*routing-typo\.json: not JSON \(/);
  });

  test("a routing file that routes an undeclared model: exit 1", () => {
    const file = catalogWith((c) => c.models.splice(2, 1));
    const { status, stderr } = admin(["catalog", "check", file]);
    assert.equal(status, 1);
    assert.match(stderr, /model tiny-chat-community is routed but the catalogue does not declare it/);
  });

  test("a declared model the routing file does not route: a warning that the embedded model serves it", () => {
    const file = catalogWith((c) => c.models.push({ ...c.models[1], id: "acme-8b", contextWindow: 32768 }));
    const { status, stdout } = admin(["catalog", "check", file]);
    assert.equal(status, 0);
    assert.match(
      stdout,
      /warning: acme-8b: the routing file .*routing\.json does not route it, so the embedded model serves it under this id/,
    );
    assert.doesNotMatch(stdout, /warning: tiny-/, "the committed routing file routes the embedded models");
  });

  test("an upstream trainer whose key variable is not set: a warning, still exit 0", () => {
    const file = catalogWith((c) => {
      c.models[0].training.trainer = {
        type: "openai-fine-tuning",
        baseUrl: "https://ft.example/v1",
        model: "base-8b",
        apiKeyEnv: "FT_KEY_NOT_SET_ANYWHERE",
      };
    });
    const { status, stdout } = admin(["catalog", "check", file]);
    assert.equal(status, 0);
    assert.match(stdout, /warning: tiny-chat: the trainer's key variable FT_KEY_NOT_SET_ANYWHERE is not set here/);
    assert.match(
      stdout,
      /warning: tiny-chat: its trainer is third-party and training\.requiredAgreementVersion is empty/,
    );
  });
});
