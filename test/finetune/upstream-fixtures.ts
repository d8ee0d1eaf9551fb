/**
 * The files an operator writes to offer a base model trained upstream: the default
 * catalogue plus `big-base`, whose trainer is the fake OpenAI-format fine-tuning API, and a
 * routing file that serves `big-base` itself from an OpenAI-compatible inference upstream.
 */
import { readFileSync } from "node:fs";
import { DEFAULT_CATALOG_FILE } from "../../server/inference/catalog-file.ts";

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
