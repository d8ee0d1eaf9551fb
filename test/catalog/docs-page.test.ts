/**
 * The docs page follows the catalogue file: a server whose catalogue declares only an
 * operator's models (`acme-8b`, and `acme-base`, trainable) lists them in the document's
 * introduction, and its examples name them instead of the embedded models it does not
 * have, so "Try it out" calls a model that exists.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, test } from "vitest";
import { parse } from "yaml";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";
import { findPlatformModel } from "../../server/inference/catalog.ts";
import { post } from "../server/http.ts";

const MODEL = {
  created: 1780000000,
  contextWindow: 8192,
  defaultMaxOutputTokens: 512,
  reasoning: false,
  tools: false,
  media: false,
  pricePerMillionTokens: "0.20",
  requiredAgreementVersion: "",
};
const CATALOG = {
  models: [
    { id: "acme-8b", ...MODEL },
    {
      id: "acme-base",
      ...MODEL,
      tools: true,
      training: {
        ratePerMillion: "3.00",
        requiredAgreementVersion: "acme-training-terms-1",
        trainer: { type: "local-lora" },
        defaults: {
          loraRank: 8,
          learningRate: "0.002",
          dpoLearningRate: "0.002",
          batchSize: 4,
          maxContextLength: 256,
          minSteps: 10,
        },
      },
    },
  ],
};

let server: TestServer;
const scratch = mkdtempSync(path.join(os.tmpdir(), "docs-catalog-"));

beforeAll(async () => {
  const catalogFile = path.join(scratch, "catalog.json");
  writeFileSync(catalogFile, JSON.stringify(CATALOG));
  server = await startTestServer({
    catalogFile,
    routing: {
      version: "docs-catalog-1",
      providers: { local: { type: "local" } },
      models: { "acme-8b": { primary: "local", standby: [] }, "acme-base": { primary: "local", standby: [] } },
      contentPolicy: { blockedInputTerms: [], blockedOutputTerms: [] },
    },
  });
});
afterAll(async () => {
  await server?.close();
  rmSync(scratch, { recursive: true, force: true });
  // The next file in this worker (the fast tier shares workers) gets the committed catalogue back.
  assert.ok(findPlatformModel("tiny-chat"), "closing the server put the committed catalogue back");
});

const documentText = async () => {
  const response = await fetch(`${server.origin}/docs/openapi.yaml`);
  assert.equal(response.status, 200);
  return response.text();
};

describe("the docs page with an operator's catalogue", () => {
  test("its introduction lists the catalogue's models with their limits, prices and training offer", async () => {
    const description = (parse(await documentText()) as { info: { description: string } }).info.description;
    assert.match(description, /## Models of this server/);
    assert.match(description, /\| `acme-8b` \| 8192 \| 512 \| text only \| 0\.20 \| no \|/);
    assert.match(
      description,
      /\| `acme-base` \| 8192 \| 512 \| tools \| 0\.20 \| 3\.00 a million tokens \(agreement `acme-training-terms-1`\) \|/,
    );
  });

  test("its examples name the catalogue's models, never an embedded model it lacks", async () => {
    const text = await documentText();
    assert.doesNotMatch(text, /tiny-chat|tiny-reasoner/);
    const document = parse(text) as any;
    const examples = document.paths["/responses"].post.requestBody.content["application/json"].examples;
    const models = Object.values(examples).map((e: any) => e.value.model);
    assert.deepEqual(models, ["acme-8b", "acme-8b"]);
    assert.match(text, /baseModel: accounts\/maas\/models\/acme-base\n/);
  });

  test("Try it out: the first example, sent as it is, is answered", async () => {
    const document = parse(await documentText()) as any;
    const example = Object.values(
      document.paths["/responses"].post.requestBody.content["application/json"].examples,
    )[0] as { value: Record<string, unknown> };
    const result = await post(server.baseUrl, "/responses", example.value, { key: server.keys.acme });
    assert.equal(result.status, 200, result.text);
    assert.equal(result.body.model, "acme-8b");
  });
});
