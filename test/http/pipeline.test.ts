/**
 * pipeline() runs its layers as express 5 would run them as separate layers: in order,
 * an error (passed, thrown or rejected) ends the sequence at the application's error
 * handler, "route" goes on, and a later layer still runs after the sequence.
 */
import assert from "node:assert/strict";
import { once } from "node:events";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, it } from "vitest";
import express from "express";
import type { ErrorRequestHandler, RequestHandler } from "express";
import { pipeline } from "../../server/http/pipeline.ts";

/** Each layer adds its name to the trail; the `fail` query names one that fails, and how. */
function layer(name: string): RequestHandler {
  return (req, res, next) => {
    (res.locals.trail as string[]).push(name);
    const [failing, how] = String(req.query.fail ?? "").split(":");
    if (failing !== name) return next();
    if (how === "next") return next(new Error(`next from ${name}`));
    if (how === "throw") throw new Error(`thrown by ${name}`);
    if (how === "route") return next("route");
    return Promise.reject(new Error(`rejected by ${name}`));
  };
}

const asyncLayer: RequestHandler = async (_req, res, next) => {
  await Promise.resolve();
  (res.locals.trail as string[]).push("async");
  next();
};

let server: Server;
let origin: string;

beforeAll(async () => {
  const app = express();
  app.use((_req, res, next) => {
    res.locals.trail = [];
    next();
  });
  app.use(pipeline(layer("a"), asyncLayer, layer("b"), layer("c")));
  app.use((_req, res) => void res.json({ trail: res.locals.trail }));
  const report: ErrorRequestHandler = (error: Error, _req, res, _next) =>
    void res.status(500).json({ trail: res.locals.trail, error: error.message });
  app.use(report);
  server = app.listen(0, "127.0.0.1");
  await once(server, "listening");
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function get(query = ""): Promise<{ status: number; body: { trail: string[]; error?: string } }> {
  const reply = await fetch(`${origin}/${query}`);
  return { status: reply.status, body: (await reply.json()) as { trail: string[]; error?: string } };
}

describe("pipeline", () => {
  it("runs every layer in order, awaiting an async one, then the layers after it", async () => {
    assert.deepEqual(await get(), { status: 200, body: { trail: ["a", "async", "b", "c"] } });
  });

  it("ends at the error handler on next(error), skipping the rest", async () => {
    assert.deepEqual(await get("?fail=b:next"), {
      status: 500,
      body: { trail: ["a", "async", "b"], error: "next from b" },
    });
  });

  it("ends at the error handler on a synchronous throw", async () => {
    assert.deepEqual(await get("?fail=a:throw"), { status: 500, body: { trail: ["a"], error: "thrown by a" } });
  });

  it("ends at the error handler on a rejected promise", async () => {
    assert.deepEqual(await get("?fail=c:reject"), {
      status: 500,
      body: { trail: ["a", "async", "b", "c"], error: "rejected by c" },
    });
  });

  it('treats next("route") as next(), as express does outside a route', async () => {
    assert.deepEqual(await get("?fail=a:route"), { status: 200, body: { trail: ["a", "async", "b", "c"] } });
  });

  it("refuses an error handler, which only express can place", () => {
    const handler: ErrorRequestHandler = (_error, _req, _res, next) => next();
    assert.throws(() => pipeline(handler as unknown as RequestHandler), /request handlers only/);
  });
});
