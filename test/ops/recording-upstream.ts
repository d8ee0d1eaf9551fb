/**
 * An OpenAI-compatible upstream on an ephemeral port that records the headers of every
 * call, and answers as its mode says (UpstreamMode). A routing file written beside it points models at it.
 */
import { writeFileSync } from "node:fs";
import http, { type IncomingHttpHeaders } from "node:http";
import { listenLocally } from "../../harness/listen.ts";

/** short: two chunks at once; slow: ten chunks 100 ms apart; endless: a chunk every 50 ms until the caller leaves; unavailable: 503. */
export type UpstreamMode = "short" | "slow" | "endless" | "unavailable";

export interface RecordingUpstream {
  baseUrl: string;
  mode: UpstreamMode;
  headers: IncomingHttpHeaders[];
  close(): Promise<void>;
}

function chunk(content: string): string {
  return `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`;
}

export async function startRecordingUpstream(mode: UpstreamMode): Promise<RecordingUpstream> {
  const state: RecordingUpstream = { baseUrl: "", mode, headers: [], close: async () => undefined };
  const server = http.createServer((req, res) => {
    state.headers.push(req.headers);
    req.resume();
    req.on("end", () => {
      if (state.mode === "unavailable") {
        res.writeHead(503, { "content-type": "application/json" }).end('{"error":{"message":"down"}}');
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      if (state.mode === "short") {
        res.write(chunk("Ahoy"));
        res.write(chunk(" there"));
        res.write(
          `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage: { prompt_tokens: 5, completion_tokens: 2 } })}\n\n`,
        );
        res.end("data: [DONE]\n\n");
        return;
      }
      let sent = 0;
      const timer = setInterval(
        () => {
          res.write(chunk(" more"));
          if (state.mode === "slow" && ++sent === 10) {
            clearInterval(timer);
            res.end("data: [DONE]\n\n");
          }
        },
        state.mode === "slow" ? 100 : 50,
      );
      res.on("close", () => clearInterval(timer));
    });
  });
  const listening = await listenLocally(server);
  state.baseUrl = `${listening.origin}/v1`;
  state.close = listening.close;
  return state;
}

/**
 * A routing file: tiny-chat on the upstream (with the local model as its standby, so a
 * failing upstream shows a fallback); every other model on the local one.
 */
export function writeRouting(file: string, upstream: RecordingUpstream): void {
  const routing = JSON.parse(JSON.stringify(ROUTING_BASE)) as {
    providers: Record<string, unknown>;
    models: Record<string, unknown>;
  };
  routing.providers.recording = {
    type: "openai-compatible",
    baseUrl: upstream.baseUrl,
    model: "upstream-model",
    timeoutMs: 5_000,
  };
  routing.models["tiny-chat"] = { primary: "recording", standby: ["local"] };
  writeFileSync(file, JSON.stringify(routing));
}

const ROUTING_BASE = {
  version: "ops-test",
  providers: { local: { type: "local" } },
  models: {
    "tiny-reasoner": { primary: "local", standby: [] },
    "tiny-chat-community": { primary: "local", standby: [] },
  } as Record<string, unknown>,
  contentPolicy: { blockedInputTerms: [], blockedOutputTerms: [] },
};
