/**
 * An OpenAI-compatible upstream that misbehaves on request: the last user message names
 * the failure (`fault:429`, `fault:503`, `fault:hang`, `fault:content`, `fault:stall`,
 * `fault:cut`, `fault:blocked`, `fault:endless`, `fault:verbose`: a long answer whatever
 * `max_tokens` it was sent); anything else is a normal short answer (which ignores
 * `max_tokens` too).
 * It lets the conformance kit provoke every upstream error code through a black-box
 * recipe of the profile (`faults.<name>: {model, input}`), the way a third party's test
 * deployment would route a model to a failing upstream. Development only: `npm start` on
 * the development seed routes its fault models to it (fault-models.ts), and the kit's own
 * tests start it beside a test server.
 */
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface TriggeredUpstream {
  baseUrl: string;
  requests: number;
  close(): Promise<void>;
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "chatcmpl-up", object: "chat.completion.chunk", created: 0, model: "up", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/** What `fault:verbose` answers, sent whole: about 60 tokens, far past any small ceiling. */
const VERBOSE_ANSWER =
  "The upstream ignores the ceiling it was sent and goes on at length: first a greeting, then a long " +
  "account of the weather in three cities, then a list of things nobody asked about, and a closing line.";

function lastUserText(body: string): string {
  try {
    const parsed = JSON.parse(body) as { messages?: { role: string; content: unknown }[] };
    const last = [...(parsed.messages ?? [])].reverse().find((m) => m.role === "user");
    return typeof last?.content === "string" ? last.content : JSON.stringify(last?.content ?? "");
  } catch {
    return "";
  }
}

async function stream(res: http.ServerResponse, text: string): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream" });
  const parts = text.match(/\S+\s*/g) ?? [];
  for (const [i, part] of parts.entries())
    res.write(chunk(i === 0 ? { role: "assistant", content: part } : { content: part }));
  res.write(chunk({}, "stop"));
  res.write(
    `data: ${JSON.stringify({ id: "chatcmpl-up", object: "chat.completion.chunk", created: 0, model: "up", choices: [], usage: { prompt_tokens: 7, completion_tokens: parts.length, total_tokens: 7 + parts.length } })}\n\n`,
  );
  res.end("data: [DONE]\n\n");
}

export async function startTriggeredUpstream(): Promise<TriggeredUpstream> {
  const state: TriggeredUpstream = { baseUrl: "", requests: 0, close: async () => undefined };
  const server = http.createServer((req, res) => {
    state.requests++;
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const trigger = /fault:([a-z0-9]+)/.exec(lastUserText(Buffer.concat(chunks).toString("utf8")))?.[1];
      switch (trigger) {
        case "429":
          res
            .writeHead(429, { "content-type": "application/json", "retry-after": "7" })
            .end('{"error":{"message":"slow down"}}');
          return;
        case "503":
          res.writeHead(503, { "content-type": "application/json" }).end('{"error":{"message":"overloaded"}}');
          return;
        case "hang":
          return; // never answers; the router's timeout decides
        case "content":
          res
            .writeHead(400, { "content-type": "application/json" })
            .end('{"error":{"code":"content_filter","message":"blocked by content policy"}}');
          return;
        case "stall":
          res.writeHead(200, { "content-type": "text/event-stream" });
          res.write(chunk({ role: "assistant", content: "The " }));
          return; // goes quiet without closing
        case "cut":
          res.writeHead(200, { "content-type": "text/event-stream" });
          res.write(chunk({ role: "assistant", content: "The " }));
          setTimeout(() => res.destroy(), 20);
          return;
        case "blocked":
          void stream(res, "Fine words come first, then forbidden-output appears.");
          return;
        case "verbose":
          void stream(res, VERBOSE_ANSWER);
          return;
        case "endless":
          res.writeHead(200, { "content-type": "text/event-stream" });
          void (async () => {
            res.write(chunk({ role: "assistant", content: "" }));
            while (!res.destroyed) {
              res.write(chunk({ content: "more " }));
              await new Promise((resolve) => setTimeout(resolve, 30));
            }
          })();
          return;
        default:
          void stream(res, "The upstream says hello to you.");
      }
    });
  });
  // Loopback only, on a port the system picks: nothing outside this machine reaches it.
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  state.baseUrl = `http://127.0.0.1:${port}/v1`;
  state.close = async () => {
    server.closeAllConnections();
    server.close();
    await once(server, "close");
  };
  return state;
}
