/**
 * A small HTTP proxy in front of the reference server that adds `"store": false` to JSON
 * request bodies that do not state `store`. The Open Responses suite never sends it, and the
 * interface document requires it (rule 1: absent is 400); everything else passes through
 * unchanged, answers and event streams included.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface StoreProxy {
  /** The proxy's origin, e.g. `http://127.0.0.1:40123`. */
  origin: string;
  close(): Promise<void>;
}

/** The body with `store: false` when it is a JSON object without `store`; otherwise unchanged. */
export function withStoreFalse(body: Buffer): Buffer {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString("utf8"));
  } catch {
    return body;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed) || "store" in parsed) return body;
  return Buffer.from(JSON.stringify({ ...parsed, store: false }));
}

export async function startStoreProxy(targetOrigin: string): Promise<StoreProxy> {
  const target = new URL(targetOrigin);
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      const body = req.method === "POST" && /json/.test(req.headers["content-type"] ?? "") ? withStoreFalse(raw) : raw;
      const headers = { ...req.headers, host: target.host, "content-length": String(body.length) };
      const upstream = http.request(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on("error", (error) => {
        res.writeHead(502, { "content-type": "text/plain" });
        res.end(`store proxy: ${error.message}`);
      });
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
