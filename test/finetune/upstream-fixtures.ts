/**
 * The files an operator writes to offer a base model trained upstream: the default
 * catalogue plus `big-base`, whose trainer is the fake OpenAI-format fine-tuning API, and a
 * routing file that serves `big-base` itself from an OpenAI-compatible inference upstream.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { DEFAULT_CATALOG_FILE } from "../../server/inference/catalog-file.ts";
import { startFakeUpstream, type FakeUpstream } from "../server/fake-upstream.ts";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";
import { startFakeFineTuning, type FakeFineTuning } from "../support/fake-openai-fine-tuning.ts";

export const UPSTREAM_BASE = "vendor-base-8b";
/** The environment variable the catalogue names for the trainer's key. */
export const KEY_ENV = "UPSTREAM_TRAINER_TEST_KEY";
export const RATE = "4.00";
/** The trainer's default SFT learning rate: learning_rate_multiplier 1. */
export const LR_UNIT = "0.0002";
export const UNREACHABLE_FOR_MS = 1_500;
export const PARTNER_AGREEMENT = "partner-trainer-dpa-2026-01";

/** The default catalogue plus `big-base`, trainable on the fake upstream trainer. */
export function upstreamCatalog(baseUrl: string, trainerExtra: Record<string, unknown> = {}): unknown {
  const catalog = JSON.parse(readFileSync(DEFAULT_CATALOG_FILE, "utf8")) as { models: unknown[] };
  catalog.models.push({
    id: "big-base",
    created: 1780000000,
    contextWindow: 32768,
    defaultMaxOutputTokens: 2048,
    reasoning: false,
    tools: true,
    media: false,
    pricePerMillionTokens: "1.00",
    requiredAgreementVersion: "",
    training: {
      ratePerMillion: RATE,
      requiredAgreementVersion: "",
      trainer: {
        type: "openai-fine-tuning",
        baseUrl,
        model: UPSTREAM_BASE,
        apiKeyEnv: KEY_ENV,
        pollMs: 20,
        maxPollMs: 200,
        unreachableForMs: UNREACHABLE_FOR_MS,
        timeoutMs: 2_000,
        ...trainerExtra,
      },
      defaults: {
        loraRank: 16,
        learningRate: LR_UNIT,
        dpoLearningRate: "0.00005",
        batchSize: 4,
        maxContextLength: 4096,
        minSteps: 6,
      },
    },
  });
  // The same trainer behind a data-processing agreement the account must accept first.
  const partner = structuredClone(catalog.models.at(-1)) as {
    id: string;
    training: { requiredAgreementVersion: string };
  };
  partner.id = "partner-base";
  partner.training.requiredAgreementVersion = PARTNER_AGREEMENT;
  catalog.models.push(partner);
  return catalog;
}

export function upstreamRouting(inferenceBaseUrl: string): unknown {
  return {
    version: "upstream-trainer-1",
    providers: {
      local: { type: "local" },
      vllm: { type: "openai-compatible", baseUrl: inferenceBaseUrl, model: UPSTREAM_BASE },
    },
    models: {
      "tiny-chat": { primary: "local", standby: [] },
      "tiny-reasoner": { primary: "local", standby: [] },
      "tiny-chat-community": { primary: "local", standby: [] },
      "big-base": { primary: "vllm", standby: [] },
    },
    contentPolicy: { blockedInputTerms: [], blockedOutputTerms: [] },
  };
}

export interface UpstreamTestServer {
  trainer: FakeFineTuning;
  inference: FakeUpstream;
  server: TestServer;
  close(): Promise<void>;
}

/**
 * A reference server in this process whose catalogue file adds `big-base`, trained by a
 * fake upstream trainer (`apiKey` in KEY_ENV, one step every `stepMs`) and served by a fake
 * inference upstream (`fineTuning`: the runner's options beyond its poll); `close` stops all
 * three and removes the catalogue's folder.
 */
export async function startUpstreamTestServer(
  apiKey: string,
  stepMs: number,
  fineTuning: { checkpointHoldMs?: number } = {},
): Promise<UpstreamTestServer> {
  const scratch = mkdtempSync(path.join(os.tmpdir(), "upstream-server-"));
  process.env[KEY_ENV] = apiKey;
  const trainer = await startFakeFineTuning({ models: [UPSTREAM_BASE], apiKey, stepMs });
  const inference = await startFakeUpstream({ kind: "stream", text: "The base model answers." });
  const catalogFile = path.join(scratch, "catalog.json");
  writeFileSync(catalogFile, JSON.stringify(upstreamCatalog(trainer.baseUrl)));
  const server = await startTestServer({
    catalogFile,
    routing: upstreamRouting(inference.baseUrl),
    fineTuning: { pollMs: 20, ...fineTuning },
  });
  return {
    trainer,
    inference,
    server,
    close: async () => {
      await server.close();
      await trainer.close();
      await inference.close();
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}
