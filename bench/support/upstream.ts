/**
 * A minimal OpenAI-compatible upstream on loopback that answers at once: a streamed chat
 * completion of `chunks` content chunks, then usage and `[DONE]`. Chunks are written
 * `intervalMs` apart (0: all at once), so long-lived streams can be held open.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { printedByChild } from "./child-output.ts";

export interface InstantUpstream {
  baseUrl: string;
  close(): Promise<void>;
}

const chunk = (content: string) =>
  `data: {"id":"c","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}},"finish_reason":null}]}\n\n`;
const TAIL =
  'data: {"id":"c","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n' +
  'data: {"id":"c","object":"chat.completion.chunk","created":0,"model":"m","choices":[],"usage":{"prompt_tokens":8,"completion_tokens":5,"total_tokens":13}}\n\n' +
  "data: [DONE]\n\n";

export async function startInstantUpstream(options: { chunks: number; intervalMs?: number }): Promise<InstantUpstream> {
  const body = Array.from({ length: options.chunks }, (_, i) => chunk(i === 0 ? "Hello" : " word")).join("") + TAIL;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      if (!options.intervalMs) return res.end(body);
      let sent = 0;
      const timer = setInterval(() => {
        if (res.destroyed) return clearInterval(timer);
        res.write(chunk(sent === 0 ? "Hello" : " word"));
        if (++sent === options.chunks) {
          clearInterval(timer);
          res.end(TAIL);
        }
      }, options.intervalMs);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

const SELF = fileURLToPath(import.meta.url);

/**
 * The same upstream in a child process of its own, so that it never shares an event loop
 * with a load generator (whose lateness would count as the server's latency).
 */
export async function startUpstreamProcess(options: { chunks: number; intervalMs?: number }): Promise<InstantUpstream> {
  const child = spawn(process.execPath, [SELF, String(options.chunks), String(options.intervalMs ?? 0)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = once(child, "exit");
  const baseUrl = await printedByChild(child, /Upstream at (http:\/\/\S+)/, "the upstream");
  return {
    baseUrl,
    async close() {
      child.kill("SIGKILL");
      await exited;
    },
  };
}

if (process.argv[1] === SELF) {
  const upstream = await startInstantUpstream({ chunks: Number(process.argv[2]), intervalMs: Number(process.argv[3]) });
  console.log(`Upstream at ${upstream.baseUrl}`);
}
