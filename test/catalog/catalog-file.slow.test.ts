/**
 * The catalogue file: the committed default is today's embedded models, and a bad file
 * is refused with a message that names the entry and the field — in the parser, and by
 * the real server process (`node server/main.ts`), which exits 1 without listening.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, test } from "vitest";
import { DEFAULT_CATALOG_FILE, loadCatalogFile, parseCatalog } from "../../server/inference/catalog-file.ts";
import { fileURLToPath } from "node:url";
import { kill, runUntilExit, spawnServer } from "../server/child-process.ts";

const scratch = mkdtempSync(path.join(os.tmpdir(), "catalog-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const defaults = () => JSON.parse(readFileSync(DEFAULT_CATALOG_FILE, "utf8")) as { models: any[] };

/** The default catalogue with `edit` applied to a copy. */
function edited(edit: (catalog: { models: any[] }) => void): unknown {
  const catalog = defaults();
  edit(catalog);
  return catalog;
}

describe("the committed default", () => {
  test("declares the three embedded models with today's limits, prices and training offer", () => {
    const models = loadCatalogFile();
    assert.deepEqual(
      models.map((m) => [m.id, m.contextWindow, m.defaultMaxOutputTokens, m.reasoning, m.tools, m.media]),
      [
        ["tiny-chat", 16384, 256, false, true, false],
        ["tiny-reasoner", 16384, 256, true, true, false],
        ["tiny-chat-community", 16384, 256, false, true, false],
      ],
    );
    assert.deepEqual(
      models.map((m) => [m.pricePerMillionTokens, m.requiredAgreementVersion]),
      [
        ["0.10", ""],
        ["0.40", ""],
        ["0", "community-license-2026-01"],
      ],
    );
    assert.deepEqual(models[0]?.training, {
      loraRank: 8,
      learningRate: "0.002",
      dpoLearningRate: "0.002",
      batchSize: 4,
      maxContextLength: 256,
      minSteps: 80,
      ratePerMillion: "0.50",
      trainer: "local-lora",
      thirdParty: false,
      requiredAgreementVersion: "",
    });
    assert.equal(models[1]?.training, undefined);
  });
});

describe("a bad catalogue is refused, naming the entry and the field", () => {
  const cases: [string, (c: { models: any[] }) => void, RegExp][] = [
    [
      "a window that is not a number",
      (c) => (c.models[1].contextWindow = "big"),
      /model "tiny-reasoner" \(models\[1\]\): contextWindow must be integer/,
    ],
    [
      "a missing field",
      (c) => delete c.models[2].tools,
      /model "tiny-chat-community" \(models\[2\]\): tools is missing/,
    ],
    [
      "an unknown field (a typo)",
      (c) => (c.models[0].contextWindw = 4096),
      /model "tiny-chat" \(models\[0\]\): contextWindw is not a field of the catalogue/,
    ],
    [
      "a price that is not a decimal",
      (c) => (c.models[0].training.ratePerMillion = "0.5 USD"),
      /model "tiny-chat" \(models\[0\]\): training\.ratePerMillion must match pattern/,
    ],
    [
      "an unknown trainer",
      (c) => (c.models[0].training.trainer = { type: "magic" }),
      /model "tiny-chat" \(models\[0\]\): training\.trainer\.type must be equal to one of the allowed values/,
    ],
    [
      "a misspelt trainer type, with the upstream trainer's settings: the type is named, not a setting",
      (c) =>
        (c.models[0].training.trainer = {
          type: "openai-finetuning",
          baseUrl: "https://trainer.example.com/v1",
          model: "base-8b",
        }),
      /model "tiny-chat" \(models\[0\]\): training\.trainer\.type must be equal to one of the allowed values \(local-lora, openai-fine-tuning\)/,
    ],
    [
      "an upstream trainer without its base URL",
      (c) => (c.models[0].training.trainer = { type: "openai-fine-tuning", model: "gpt-x" }),
      /model "tiny-chat" \(models\[0\]\): training\.trainer\.baseUrl is missing/,
    ],
    [
      "an id declared twice",
      (c) => c.models.push({ ...c.models[1] }),
      /model "tiny-reasoner" \(models\[3\]\): id is declared twice/,
    ],
    [
      "a default ceiling beyond the window",
      (c) => (c.models[1].defaultMaxOutputTokens = 20000),
      /model "tiny-reasoner" \(models\[1\]\): defaultMaxOutputTokens \(20000\) is larger than contextWindow \(16384\)/,
    ],
  ];
  for (const [what, edit, message] of cases) {
    test(what, () => {
      assert.throws(() => parseCatalog(edited(edit), "catalogue file x.json"), message);
    });
  }

  test("the real server refuses to start: exit code 1, the message on stderr, nothing listening", async () => {
    const file = path.join(scratch, "bad-catalog.json");
    writeFileSync(file, JSON.stringify(edited((c) => (c.models[1].contextWindow = -5))));
    const { code, stdout, stderr } = await runServer({ CATALOG_FILE: file });
    assert.equal(code, 1);
    assert.match(
      stderr,
      new RegExp(
        `Cannot start: catalogue file ${file.replaceAll(/[.*+?^${}()|[\]\\]/g, "\\$&")}: model "tiny-reasoner" \\(models\\[1\\]\\): contextWindow must be >= 1`,
      ),
    );
    assert.doesNotMatch(stdout, /Listening/);
    assert.doesNotMatch(stderr, /\n\s+at /, "no stack trace");
  });

  test("the real server refuses a routing file that routes a model the catalogue does not declare", async () => {
    const routing = path.join(scratch, "routing.json");
    writeFileSync(
      routing,
      JSON.stringify({
        version: "r1",
        providers: { local: { type: "local" } },
        models: { "tiny-chat": { primary: "local" }, "ghost-model": { primary: "local" } },
      }),
    );
    const { code, stderr } = await runServer({ ROUTING_FILE: routing });
    assert.equal(code, 1);
    assert.match(
      stderr,
      /Cannot start: routing file .*: model ghost-model is routed but the catalogue does not declare it/,
    );
  });

  test("a routing file that is not JSON, or does not exist, is named", async () => {
    const routing = path.join(scratch, "routing-typo.json");
    writeFileSync(routing, '{ "version": "r1", providers: {} }');
    const bad = await runServer({ ROUTING_FILE: routing });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /Cannot start: routing file .*routing-typo\.json: not JSON \(/);
    const missing = await runServer({ ROUTING_FILE: path.join(scratch, "no-routing.json") });
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /Cannot start: routing file .*no-routing\.json: cannot be read \(ENOENT\)/);
  });

  test("a catalogue file that does not exist is named", async () => {
    const { code, stderr } = await runServer({ CATALOG_FILE: path.join(scratch, "missing.json") });
    assert.equal(code, 1);
    assert.match(stderr, /Cannot start: catalogue file .*missing\.json: cannot be read \(ENOENT\)/);
  });
});

describe("start-up warnings of the operator's files", () => {
  test("a declared model with no route, and an upstream trainer whose key is not set, are logged", async () => {
    const examples = fileURLToPath(new URL("../../docs/examples/providers/", import.meta.url));
    const routing = JSON.parse(readFileSync(path.join(examples, "routing.json"), "utf8"));
    delete routing.models["chat-8b"];
    const routingFile = path.join(scratch, "routing-without-chat-8b.json");
    writeFileSync(routingFile, JSON.stringify(routing));
    const started = await spawnServer(
      {
        PORT: "0",
        HOST: "127.0.0.1",
        NODE_ENV: "",
        DATA_DIR: path.join(scratch, "warned-data"),
        LOG_LEVEL: "warn",
        CATALOG_FILE: path.join(examples, "catalog.json"),
        ROUTING_FILE: routingFile,
        VLLM_KEY: "set",
        TRAINER_KEY: "", // empty is unset (settings/environment.ts)
      },
      "keep",
    );
    try {
      const lines = started
        .log()
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const unrouted = lines.find((line) => line.event === "catalog.unrouted");
      assert.equal(unrouted?.model, "chat-8b", started.log());
      const keyless = lines.find((line) => line.event === "catalog.trainer_key_missing");
      assert.equal(keyless?.model, "chat-8b-tunable", started.log());
      assert.match(String(keyless?.detail), /TRAINER_KEY is not set/);
    } finally {
      await kill(started.child);
    }
  });
});

/** `node server/main.ts` with `env`, until it exits (a server that starts is killed after 20 s: the test fails). */
function runServer(env: Record<string, string>) {
  const where = { PORT: "0", HOST: "127.0.0.1", DATA_DIR: path.join(scratch, "data"), LOG_LEVEL: "warn" };
  return runUntilExit("server/main.ts", [], { ...where, ...env });
}
