/**
 * `GET /metrics` in the Prometheus text format, on a listener of its own (METRICS_PORT),
 * not on the API's port: the metrics stay off the address clients and the internet reach
 * without a token to hand out and rotate, and a scraper reaches the process directly
 * (every replica, not whichever one a balancer picks). The same listener answers
 * /healthz and /readyz too, for orchestrators that probe a side port.
 */
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Router } from "express";
import express from "express";
import { servesWith, type ServerClasses } from "../http/prototypes.ts";
import { collectProcessMetrics, registry } from "./metrics.ts";

export interface MetricsListener {
  /** `http://host:port` */
  origin: string;
  close(): Promise<void>;
}

export async function startMetricsServer(options: {
  port: number;
  host: string;
  probes?: Router;
  /** The API listener's request classes (http/prototypes.ts), when this process has one: one shape for both listeners' objects. */
  serverClasses?: ServerClasses;
}): Promise<MetricsListener> {
  collectProcessMetrics();
  const app = express();
  if (options.serverClasses) servesWith(app, options.serverClasses);
  app.set("x-powered-by", false);
  app.get("/metrics", async (_req, res, next) => {
    try {
      const text = await registry.metrics();
      res.setHeader("content-type", registry.contentType);
      res.setHeader("cache-control", "no-store");
      res.end(text);
    } catch (error) {
      next(error);
    }
  });
  if (options.probes) app.use(options.probes);
  app.use((_req, res) => {
    res.status(404).json({
      error: {
        message: "Only /metrics, /healthz and /readyz are served here.",
        type: "not_found_error",
        code: "NOT_FOUND",
        param: null,
      },
    });
  });
  const server = http.createServer({ ...options.serverClasses }, app);
  server.listen(options.port, options.host);
  await Promise.race([once(server, "listening"), once(server, "error").then(([error]) => Promise.reject(error))]);
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  return {
    origin: `http://${host}:${port}`,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}
