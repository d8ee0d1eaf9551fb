/**
 * The platform models: what each can do and how it may be trained. Routing
 * (routing.ts) says which provider serves a model; this file says what the model is.
 */
import { PLATFORM_ACCOUNT, parseResourceName, resourceName } from "../../client/resource-names.ts";

export interface TrainingDefaults {
  loraRank: number;
  /** For supervised (SFT) jobs. */
  learningRate: string;
  /**
   * For preference (DPO) jobs: DPO pushes the rejected answer down without bound, so a rate
   * that suits SFT wrecks the model within a few steps (measured: bench/training.ts).
   */
  dpoLearningRate: string;
  batchSize: number;
  maxContextLength: number;
  /** The default epochs give at least this many optimisation steps (finetune/plan.ts defaultEpochs). */
  minSteps: number;
}

export interface PlatformModel {
  /** The bare slug callers send (`tiny-chat`); `accounts/maas/models/{id}` names it too. */
  id: string;
  /** Unix seconds, as `created` in GET /models. */
  created: number;
  /**
   * Input plus output tokens as the API counts them; more is CONTEXT_LENGTH_EXCEEDED. The
   * embedded models declare 16 384 (the decisions), though the model itself reads only the
   * last 256 tokens of a prompt, so that the messages clients' default `max_tokens` (4 096
   * to 8 192) is accepted.
   */
  contextWindow: number;
  /** Default output ceiling when the request sets none. */
  defaultMaxOutputTokens: number;
  reasoning: boolean;
  tools: boolean;
  /** Accepts image and file parts. The embedded models are text-only. */
  media: boolean;
  /** Price of a million tokens (input plus output) as a decimal string; "0" for a free model. */
  pricePerMillionTokens: string;
  /** An agreement version the account must have accepted to call the model; "" for none. */
  requiredAgreementVersion: string;
  /** Offered as a fine-tuning base model, with the defaults a job's config starts from. */
  training?: TrainingDefaults & {
    ratePerMillion: string;
    trainer: string;
    thirdParty: boolean;
    requiredAgreementVersion: string;
  };
}

export { PLATFORM_ACCOUNT };

/** The context window the embedded models declare, as the API counts it (see `contextWindow`). */
export const EMBEDDED_CONTEXT_WINDOW = 16_384;

export const PLATFORM_MODELS: readonly PlatformModel[] = [
  {
    id: "tiny-chat",
    created: 1767225600,
    contextWindow: EMBEDDED_CONTEXT_WINDOW,
    defaultMaxOutputTokens: 256,
    reasoning: false,
    tools: true,
    media: false,
    pricePerMillionTokens: "0.10",
    requiredAgreementVersion: "",
    training: {
      loraRank: 8,
      learningRate: "0.002",
      dpoLearningRate: "0.002",
      // 4, not 8: the same 80 steps on half as many rows each taught a new voice to 66 % of
      // held-out answers against 51 % over ten seeds, the rest level (docs/decisions.md).
      batchSize: 4,
      maxContextLength: 256,
      minSteps: 80,
      ratePerMillion: "0.50",
      trainer: "local-lora",
      thirdParty: false,
      requiredAgreementVersion: "",
    },
  },
  {
    id: "tiny-reasoner",
    created: 1767225600,
    contextWindow: EMBEDDED_CONTEXT_WINDOW,
    defaultMaxOutputTokens: 256,
    reasoning: true,
    tools: true,
    media: false,
    pricePerMillionTokens: "0.40",
    requiredAgreementVersion: "",
  },
  {
    // The same weights under a licence an account must accept first (AGREEMENT_REQUIRED),
    // and free of charge: the catalogue's example of both.
    id: "tiny-chat-community",
    created: 1767225600,
    contextWindow: EMBEDDED_CONTEXT_WINDOW,
    defaultMaxOutputTokens: 256,
    reasoning: false,
    tools: true,
    media: false,
    pricePerMillionTokens: "0",
    requiredAgreementVersion: "community-license-2026-01",
  },
];

/** `accounts/maas/models/{id}`: a platform model's full resource name. */
export function platformModelName(id: string): string {
  return resourceName(PLATFORM_ACCOUNT, "models", id);
}

/** The platform model a request names, by bare slug or `accounts/maas/models/{id}`; undefined if none. */
export function findPlatformModel(name: string): PlatformModel | undefined {
  const named = parseResourceName(name, "models");
  const id = named?.account === PLATFORM_ACCOUNT ? named.id : name;
  return PLATFORM_MODELS.find((m) => m.id === id);
}
