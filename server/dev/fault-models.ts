/**
 * Development only (the development seed, never production): three models that fail the way
 * an upstream or a provider can, so that `npm start` offers everything the conformance kit's
 * `upstream` transcripts need, and `conformance/profiles/reference.json` names them.
 *
 * - `dev-upstream-faults`: routed to the built-in misbehaving upstream (misbehaving-upstream.ts),
 *   which reacts to trigger terms in the last user message (`fault:429`, `fault:503`,
 *   `fault:hang`, `fault:content`, `fault:stall`, `fault:cut`, `fault:blocked`,
 *   `fault:endless`); with short timeouts, so a hang or a stall is reported within a second;
 * - `dev-crash`: a provider that throws an error nobody planned for (500 INTERNAL, whose
 *   message must not leak it);
 * - `dev-fallback`: a primary that refuses connections and the local model as standby
 *   (`x-provider-class: fallback`).
 *
 * They are callable but not listed by GET /models (the catalogue's own models are what a
 * client lists), and `forbidden-output` joins the blocked output terms.
 */
import type { GenerationEvent, Provider } from "../inference/engine.ts";
import type { PlatformModel } from "../inference/catalog.ts";
import { OpenAiUpstreamProvider } from "../inference/providers/openai-upstream.ts";
import type { RoutingConfig } from "../inference/routing.ts";
import { startTriggeredUpstream } from "./misbehaving-upstream.ts";

/** What the blocked-output trigger makes the upstream say. */
export const DEV_BLOCKED_OUTPUT_TERM = "forbidden-output";
/** How long the misbehaving upstream may keep the router waiting: first byte, and between chunks. */
const UPSTREAM_TIMEOUT_MS = 400;

const DEV_MODEL: Omit<PlatformModel, "id"> = {
  created: 1767225600,
  contextWindow: 2048,
  defaultMaxOutputTokens: 64,
  reasoning: false,
  tools: true,
  media: false,
  pricePerMillionTokens: "0",
  requiredAgreementVersion: "",
};

export const DEV_FAULT_MODELS: readonly PlatformModel[] = ["dev-upstream-faults", "dev-crash", "dev-fallback"].map(
  (id) => ({ id, ...DEV_MODEL }),
);

/** A provider that crashes in a way no one planned for, with internals in the message. */
export const crashingProvider: Provider = {
  name: "dev-crash",
  async *generate(): AsyncIterable<GenerationEvent> {
    throw new Error("dev-crash: secret internal detail /etc/passwd at engine.ts:12");
  },
};

export interface DevFaultModels {
  routing: RoutingConfig;
  providers: Record<string, Provider>;
  models: readonly PlatformModel[];
  close(): Promise<void>;
}

/** Starts the misbehaving upstream and returns `routing` with the three fault models added. */
export async function startDevFaultModels(routing: RoutingConfig): Promise<DevFaultModels> {
  const upstream = await startTriggeredUpstream();
  const misbehaving = new OpenAiUpstreamProvider({
    name: "dev-misbehaving-upstream",
    baseUrl: upstream.baseUrl,
    model: "upstream-model",
    timeoutMs: UPSTREAM_TIMEOUT_MS,
    stallTimeoutMs: UPSTREAM_TIMEOUT_MS,
  });
  const refused = new OpenAiUpstreamProvider({
    name: "dev-refused",
    // Nothing listens on port 1: the connection is refused before any output, so the standby serves.
    baseUrl: "http://127.0.0.1:1/v1",
    model: "upstream-model",
    timeoutMs: UPSTREAM_TIMEOUT_MS,
    stallTimeoutMs: UPSTREAM_TIMEOUT_MS,
  });
  const blocked = routing.contentPolicy.blockedOutputTerms;
  return {
    routing: {
      ...routing,
      models: {
        ...routing.models,
        "dev-upstream-faults": { primary: misbehaving.name, standby: [] },
        "dev-crash": { primary: crashingProvider.name, standby: [] },
        "dev-fallback": { primary: refused.name, standby: ["local"] },
      },
      contentPolicy: {
        ...routing.contentPolicy,
        blockedOutputTerms: blocked.includes(DEV_BLOCKED_OUTPUT_TERM) ? blocked : [...blocked, DEV_BLOCKED_OUTPUT_TERM],
      },
    },
    providers: { [misbehaving.name]: misbehaving, [refused.name]: refused, [crashingProvider.name]: crashingProvider },
    models: DEV_FAULT_MODELS,
    close: () => upstream.close(),
  };
}
