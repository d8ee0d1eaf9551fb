/**
 * The platform models: what each can do and how it may be trained. Routing
 * (routing.ts) says which provider serves a model; the catalogue file (catalog-file.ts,
 * server/catalog.json by default) says what the model is.
 */
import { PLATFORM_ACCOUNT, parseResourceName, resourceName } from "../../common/resource-names.ts";
import { loadCatalogFile } from "./catalog-file.ts";

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
    /** The trainer type: `local-lora` (this machine) or `openai-fine-tuning` (an upstream). */
    trainer: string;
    /** The trainer is not this machine's: the dataset leaves it (the estimate's `egress`). */
    thirdParty: boolean;
    requiredAgreementVersion: string;
    /** The upstream trainer's settings, for `openai-fine-tuning`. */
    upstream?: UpstreamTrainerSettings;
  };
}

/** Where an `openai-fine-tuning` trainer is and how patiently it is polled. */
export interface UpstreamTrainerSettings {
  /** The upstream's OpenAI-format API, e.g. `https://api.example.com/v1`. */
  baseUrl: string;
  /** The upstream's name of the base model. */
  model: string;
  /** The environment variable holding the upstream's key, if it needs one. */
  apiKeyEnv?: string;
  /** The learning rate that maps to `learning_rate_multiplier` 1 (default: the base's learningRate). */
  learningRateUnit?: string;
  /** First poll interval in milliseconds (default 2000); it doubles while nothing changes. */
  pollMs?: number;
  /** Longest poll interval (default 60000). */
  maxPollMs?: number;
  /** How long the upstream may stay unreachable before the job fails (default 600000). */
  unreachableForMs?: number;
  /** One request's timeout (default 30000). */
  timeoutMs?: number;
}

export { PLATFORM_ACCOUNT };

/**
 * The catalogue the server works from: the committed default file until startServer
 * installs the one its settings name (CATALOG_FILE). One per process, like the
 * process's other configuration; every server in a process uses the last one installed.
 */
let installed: readonly PlatformModel[] | undefined;

/** Makes `models` the platform catalogue (startServer does, from the catalogue file). */
export function installCatalog(models: readonly PlatformModel[]): void {
  installed = models;
}

/** Every platform model, in the catalogue file's order. */
export function platformModels(): readonly PlatformModel[] {
  installed ??= loadCatalogFile();
  return installed;
}

/** `accounts/maas/models/{id}`: a platform model's full resource name. */
export function platformModelName(id: string): string {
  return resourceName(PLATFORM_ACCOUNT, "models", id);
}

/** The platform model a request names, by bare slug or `accounts/maas/models/{id}`; undefined if none. */
export function findPlatformModel(name: string): PlatformModel | undefined {
  const named = parseResourceName(name, "models");
  const id = named?.account === PLATFORM_ACCOUNT ? named.id : name;
  return platformModels().find((m) => m.id === id);
}
