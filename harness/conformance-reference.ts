/**
 * The reference server as the conformance tests run it, and the profile that describes it.
 *
 * - `startReferenceServer()`: the whole server (test harness, development seed and its fault
 *   models, as `npm start` runs it) with jobs
 *   polled quickly, small request and media limits (so MEDIA_TOO_LARGE is cheap to
 *   provoke), and the request limits of the two ordinary accounts lifted (a test runs the
 *   kit several times a minute; the rate-limited demo account keeps its limit, which the
 *   kit proves). The profile is conformance/profiles/reference.json with those settings.
 * - `startUpstreamFaultServer()`: a second reference server whose models are routed to a
 *   misbehaving OpenAI-compatible upstream (server/dev/misbehaving-upstream.ts) and a crashing provider,
 *   with the profile's `faults` recipes, for the transcripts of the `upstream` area.
 */
import { fileURLToPath } from "node:url";
import type { GenerationEvent, Provider } from "../server/inference/engine.ts";
import { loadProfile, type Profile } from "../conformance/index.ts";
import { startTestServer, type TestServer } from "./test-server.ts";
import { startTriggeredUpstream, type TriggeredUpstream } from "../server/dev/misbehaving-upstream.ts";

export const REFERENCE_PROFILE = fileURLToPath(new URL("../conformance/profiles/reference.json", import.meta.url));

const MAX_BODY_BYTES = 256 * 1024;
/**
 * Jobs stay in CHECKPOINTING at least this long, as a hosted trainer's would, so that the
 * transcript that cancels a job there (409 JOB_STATE_INVALID) hits the state every time.
 */
export const CHECKPOINT_HOLD_MS = 500;
const MEDIA_MAX_BYTES = 16 * 1024;

export interface Reference {
  server: TestServer;
  profile: Profile;
  close(): Promise<void>;
}

export async function startReferenceServer(): Promise<Reference> {
  const server = await startTestServer({
    // What `npm start` offers on the development seed: the fault models the upstream transcripts call.
    devFaultModels: true,
    fineTuning: { pollMs: 20, checkpointHoldMs: CHECKPOINT_HOLD_MS },
    maxBodyBytes: MAX_BODY_BYTES,
    engine: { mediaMaxBytes: MEDIA_MAX_BYTES },
  });
  for (const account of ["acme", "globex"]) await server.store.accounts.update(account, { requestsPerMinute: null });
  const profile = loadProfile(REFERENCE_PROFILE, { baseUrl: server.baseUrl });
  profile.settings = {
    ...profile.settings,
    mediaMaxBytes: MEDIA_MAX_BYTES,
    maxRequestBytes: MAX_BODY_BYTES,
    checkpointingMs: CHECKPOINT_HOLD_MS,
  };
  return { server, profile, close: () => server.close() };
}

/** A provider that crashes in a way no one planned for, with secrets in the message. */
const crashing: Provider = {
  name: "crash",

  async *generate(): AsyncIterable<GenerationEvent> {
    throw new Error("secret internal detail /etc/passwd at engine.ts:12");
  },
};

/** The reference profile with the recipes that provoke each upstream failure on the fault server. */
export function upstreamFaultProfile(baseUrl: string): Profile {
  const profile = loadProfile(REFERENCE_PROFILE, { baseUrl });
  const faulty = (input: string) => ({ model: "tiny-reasoner", input, headers: {} });
  profile.faults = {
    upstreamRateLimited: faulty("fault:429"),
    upstreamUnavailable: faulty("fault:503"),
    upstreamTimeout: faulty("fault:hang"),
    upstreamContentRejected: faulty("fault:content"),
    stalledStream: faulty("fault:stall"),
    cutStream: faulty("fault:cut"),
    blockedOutput: { ...faulty("fault:blocked"), term: "forbidden-output" },
    slowAnswer: faulty("fault:endless"),
    ignoredCeiling: faulty("fault:verbose"),
    internalError: { model: "tiny-chat", input: "Hi", headers: {} },
    fallback: { model: "tiny-chat-community", input: "Hi", headers: {} },
  };
  return profile;
}

export interface UpstreamFaultReference extends Reference {
  upstream: TriggeredUpstream;
}

export async function startUpstreamFaultServer(): Promise<UpstreamFaultReference> {
  const upstream = await startTriggeredUpstream();
  const server = await startTestServer({
    engine: { stallTimeoutMs: 400 },
    providers: { crash: crashing },
    routing: {
      version: "conformance-upstream-faults",
      providers: {
        local: { type: "local" },
        crash: { type: "local" },
        faulty: { type: "openai-compatible", baseUrl: upstream.baseUrl, model: "upstream-model", timeoutMs: 400 },
        // Nothing listens on port 1: connection refused, so the standby serves.
        refused: { type: "openai-compatible", baseUrl: "http://127.0.0.1:1/v1", model: "upstream-model" },
      },
      models: {
        "tiny-chat": { primary: "crash", standby: [] },
        "tiny-reasoner": { primary: "faulty", standby: [] },
        "tiny-chat-community": { primary: "refused", standby: ["local"] },
      },
      contentPolicy: { blockedInputTerms: ["blocked-demo-term"], blockedOutputTerms: ["forbidden-output"] },
    },
  });
  for (const account of ["acme", "globex"]) await server.store.accounts.update(account, { requestsPerMinute: null });
  const profile = upstreamFaultProfile(server.baseUrl);
  return {
    server,
    profile,
    upstream,
    async close() {
      await server.close();
      await upstream.close();
    },
  };
}
