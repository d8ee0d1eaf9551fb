/**
 * The routing file: which providers serve each platform model, in order of preference,
 * and the content policy. Its `version` is sent as `x-config-version`. Provider names
 * stay inside the server: responses say only `primary` or `fallback`.
 */
import { readConfigDocument } from "./config-file.ts";

export type ProviderConfig =
  | { type: "local" }
  | {
      type: "openai-compatible";
      /** Base URL of the upstream's OpenAI-compatible API, e.g. `http://127.0.0.1:8000/v1`. */
      baseUrl: string;
      /** The upstream's name for the model. */
      model: string;
      /** Name of the environment variable holding the upstream's key, if it needs one. */
      apiKeyEnv?: string;
      /** Time to wait for the upstream's first byte, in milliseconds (default 30000). */
      timeoutMs?: number;
    };

export interface ModelRoute {
  primary: string;
  standby: string[];
}

export interface ContentPolicy {
  /** Case-insensitive terms; an input containing one is CONTENT_BLOCKED_INPUT. */
  blockedInputTerms: string[];
  /** Case-insensitive terms; generated text containing one is CONTENT_BLOCKED_OUTPUT. */
  blockedOutputTerms: string[];
}

export interface RoutingConfig {
  version: string;
  providers: Record<string, ProviderConfig>;
  models: Record<string, ModelRoute>;
  contentPolicy: ContentPolicy;
}

/** Reads and checks the routing file; a file that cannot be read or is not JSON is named, as the catalogue's is. */
export function loadRoutingConfig(path: string): RoutingConfig {
  const source = `routing file ${path}`;
  return parseRoutingConfig(readConfigDocument(path, source, { yamlByName: false }), source);
}

/** Checks the file's shape so a typo fails at start-up, not on the first request. */
export function parseRoutingConfig(raw: unknown, source = "routing config"): RoutingConfig {
  const fail = (what: string): never => {
    throw new Error(`${source}: ${what}`);
  };
  if (typeof raw !== "object" || raw === null) return fail("not a JSON object");
  const config = raw as Partial<RoutingConfig>;
  if (typeof config.version !== "string" || config.version === "") fail("version must be a non-empty string");
  const providers = config.providers ?? fail("providers is missing");
  const models = config.models ?? fail("models is missing");
  for (const [name, provider] of Object.entries(providers)) {
    if (
      provider.type === "openai-compatible" &&
      (typeof provider.baseUrl !== "string" || typeof provider.model !== "string")
    ) {
      fail(`provider ${name}: baseUrl and model are required`);
    } else if (provider.type === "openai-compatible" && !isHttpUrl(provider.baseUrl)) {
      fail(`provider ${name}: baseUrl must be an http or https URL, not ${JSON.stringify(provider.baseUrl)}`);
    } else if (provider.type !== "local" && provider.type !== "openai-compatible") {
      fail(`provider ${name}: unknown type ${(provider as { type: unknown }).type}`);
    }
  }
  for (const [model, route] of Object.entries(models)) {
    for (const name of [route.primary, ...(route.standby ?? [])]) {
      if (!(name in providers)) fail(`model ${model}: unknown provider ${name}`);
    }
    route.standby ??= [];
  }
  const policy = config.contentPolicy ?? { blockedInputTerms: [], blockedOutputTerms: [] };
  return {
    version: config.version as string,
    providers,
    models,
    contentPolicy: {
      blockedInputTerms: policy.blockedInputTerms ?? [],
      blockedOutputTerms: policy.blockedOutputTerms ?? [],
    },
  };
}

/** An upstream's base URL: the provider's connection pool speaks HTTP/1.1 over http or https. */
function isHttpUrl(text: string): boolean {
  const url = URL.parse(text);
  return url !== null && (url.protocol === "http:" || url.protocol === "https:");
}

/** A route for a model the catalogue does not declare is a mistake in one of the two files: refused at start-up. */
export function checkRoutedModels(
  routing: RoutingConfig,
  catalogIds: readonly string[],
  source = "routing config",
): void {
  const known = new Set(catalogIds);
  for (const model of Object.keys(routing.models)) {
    if (!known.has(model))
      throw new Error(
        `${source}: model ${model} is routed but the catalogue does not declare it (catalogue ids: ${[...known].join(", ")})`,
      );
  }
}

/**
 * Declared models the routing file does not route: the embedded model serves them under
 * their catalogue ids, which is right for the embedded models and a trap for a model meant
 * to come from an upstream (a forgotten route serves the 2-layer model as `acme-8b`).
 */
export function unroutedModels(routing: RoutingConfig, catalogIds: readonly string[]): string[] {
  return catalogIds.filter((id) => !(id in routing.models));
}
