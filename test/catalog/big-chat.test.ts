/**
 * An operator declares a new model in files only: `big-chat` in a catalogue file, with a
 * window, ceiling, capabilities and price of its own, routed to an OpenAI-compatible
 * upstream (the fake one). The server lists it, serves it under the catalogue's id, and
 * enforces the catalogue's limits itself, whatever the upstream would take; the estimate
 * follows the file's training offer.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, test } from "vitest";
import { DEFAULT_CATALOG_FILE } from "../../server/inference/catalog-file.ts";
import { call, readyDataset, ahoyRows, type Caller } from "../finetune/fixtures.ts";
import { startFakeUpstream, type FakeUpstream } from "../server/fake-upstream.ts";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";
import { post, responsesBody } from "../server/http.ts";
import { assertError, request } from "../support/http.ts";

const UPSTREAM_MODEL = "vendor/secret-70b-instruct";
/** tiny-chat's window in the committed catalogue; big-chat's is four times it. */
const TINY_WINDOW = (
  JSON.parse(readFileSync(DEFAULT_CATALOG_FILE, "utf8")) as { models: { id: string; contextWindow: number }[] }
).models.find((m) => m.id === "tiny-chat")!.contextWindow;
const BIG_WINDOW = 4 * TINY_WINDOW;
const TEXT = "Big chat answers from upstream.";
const BIG_CHAT = {
  id: "big-chat",
  created: 1780000000,
  contextWindow: BIG_WINDOW,
  defaultMaxOutputTokens: 1024,
  reasoning: false,
  tools: false,
  media: false,
  pricePerMillionTokens: "2.00",
  requiredAgreementVersion: "",
  training: {
    ratePerMillion: "3.00",
    requiredAgreementVersion: "",
    trainer: { type: "openai-fine-tuning", baseUrl: "http://127.0.0.1:1/v1", model: UPSTREAM_MODEL },
    defaults: {
      loraRank: 16,
      learningRate: "0.0001",
      dpoLearningRate: "0.00001",
      batchSize: 8,
      maxContextLength: 4096,
      minSteps: 10,
    },
  },
};

let server: TestServer;
let upstream: FakeUpstream;
let acme: Caller;
const catalogDir = mkdtempSync(path.join(os.tmpdir(), "big-chat-"));

beforeAll(async () => {
  upstream = await startFakeUpstream({ kind: "stream", text: TEXT });
  const catalog = JSON.parse(readFileSync(DEFAULT_CATALOG_FILE, "utf8")) as { models: unknown[] };
  catalog.models.push(BIG_CHAT);
  const catalogFile = path.join(catalogDir, "catalog.json");
  writeFileSync(catalogFile, JSON.stringify(catalog));
  server = await startTestServer({
    routing: {
      version: "big-chat-1",
      providers: {
        local: { type: "local" },
        vllm: { type: "openai-compatible", baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL },
      },
      models: {
        "tiny-chat": { primary: "local", standby: [] },
        "tiny-reasoner": { primary: "local", standby: [] },
        "tiny-chat-community": { primary: "local", standby: [] },
        "big-chat": { primary: "vllm", standby: [] },
      },
      contentPolicy: { blockedInputTerms: [], blockedOutputTerms: [] },
    },
    catalogFile,
  });
  acme = { server, account: "acme", key: server.keys.acme as string };
});
afterAll(async () => {
  await server?.close();
  await upstream?.close();
  rmSync(catalogDir, { recursive: true, force: true });
});

const respond = (body: Record<string, unknown>) =>
  post(server.baseUrl, "/responses", responsesBody(body), { key: server.keys.acme });
/** About `n` tokens of input. */
const longInput = (n: number) => "word ".repeat(n);

describe("a model declared in the catalogue file", () => {
  test("GET /models lists it with the file's created; GET /models/big-chat reads it", async () => {
    const list = await request(`${server.baseUrl}/models`, { key: server.keys.acme });
    assert.equal(list.status, 200, list.text);
    const big = list.body.data.find((m: { id: string }) => m.id === "big-chat");
    assert.deepEqual(big, { id: "big-chat", object: "model", created: 1780000000, owned_by: "maas" });
    const one = await request(`${server.baseUrl}/models/big-chat`, { key: server.keys.acme });
    assert.equal(one.status, 200, one.text);
    assert.equal(one.body.created, 1780000000);
  });

  test("is served by its upstream under the catalogue's id: the upstream's name never shows", async () => {
    const before = upstream.requests;
    const result = await respond({ model: "big-chat", max_output_tokens: 64 });
    assert.equal(result.status, 200, result.text);
    assert.equal(result.body.model, "big-chat");
    assert.equal(result.body.output[0].content[0].text, TEXT);
    assert.equal(upstream.requests, before + 1);
    assert.doesNotMatch(result.text, /secret-70b|vendor/);
  });

  test("its own window: an input too long for tiny-chat's window fits big-chat's", async () => {
    const input = longInput(Math.round(TINY_WINDOW * 1.5));
    const tiny = await respond({ model: "tiny-chat", input, max_output_tokens: 16 });
    assertError(tiny, { status: 400, code: "CONTEXT_LENGTH_EXCEEDED", type: "invalid_request_error" });
    assert.match(tiny.body.error.message, new RegExp(`context window of ${TINY_WINDOW} tokens`));
    const big = await respond({ model: "big-chat", input, max_output_tokens: 16 });
    assert.equal(big.status, 200, big.text);
  });

  test("the window is enforced here, before the upstream is asked, whatever it would allow", async () => {
    const before = upstream.requests;
    const over = await respond({
      model: "big-chat",
      input: longInput(Math.round(TINY_WINDOW * 1.5)),
      max_output_tokens: 3 * TINY_WINDOW,
    });
    assertError(over, { status: 400, code: "CONTEXT_LENGTH_EXCEEDED", type: "invalid_request_error" });
    assert.match(over.body.error.message, new RegExp(`context window of ${BIG_WINDOW} tokens`));
    const tooLong = await respond({ model: "big-chat", input: longInput(BIG_WINDOW + 100) });
    assertError(tooLong, { status: 400, code: "CONTEXT_LENGTH_EXCEEDED", type: "invalid_request_error" });
    assert.equal(upstream.requests, before, "the upstream was never asked");
  });

  test("its capabilities: no tools and no reasoning is MODEL_CAPABILITY_UNSUPPORTED", async () => {
    const tools = await respond({
      model: "big-chat",
      tools: [{ type: "function", name: "lookup", parameters: { type: "object", properties: {} } }],
    });
    assertError(tools, { status: 400, code: "MODEL_CAPABILITY_UNSUPPORTED", type: "invalid_request_error" });
    assert.equal(tools.body.error.param, "tools");
    const reasoning = await respond({ model: "big-chat", reasoning: { effort: "low" } });
    assertError(reasoning, { status: 400, code: "MODEL_CAPABILITY_UNSUPPORTED", type: "invalid_request_error" });
    // The same request on a model the file says reasons is served.
    const reasoner = await respond({ model: "tiny-reasoner", reasoning: { effort: "low" } });
    assert.equal(reasoner.status, 200, reasoner.text);
  });

  test("the estimate follows the file's training offer: its rate, and a third-party trainer in egress", async () => {
    const data = await readyDataset(acme, "big-chat-data", ahoyRows(20));
    const result = await call(acme, "POST", "/supervisedFineTuningJobs:estimateCost", {
      baseModel: "accounts/maas/models/big-chat",
      inputDatasetVersion: data,
      config: { outputModelId: "big-chat-ahoy", epochs: 2 },
    });
    assert.equal(result.status, 200, result.text);
    const { estimate, egress } = result.body;
    assert.deepEqual(estimate.ratePerMillion, { amount: "3.00", currency: "USD" });
    assert.equal(estimate.epochs, 2);
    assert.equal(egress.execution.thirdParty, true);
    assert.equal(egress.allowed, true);
  });
});
