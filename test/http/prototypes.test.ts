/**
 * expressPrototypes(): node:http builds each request and response with express's own
 * prototypes, so express's app.handle finds them already in place (the point of it), and
 * the objects are still node's IncomingMessage and ServerResponse with express's methods.
 */
import assert from "node:assert/strict";
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, it } from "vitest";
import express from "express";
import { expressPrototypes } from "../../server/http/prototypes.ts";

let server: http.Server;
let origin: string;
/** What the handler saw of the objects node built, before and after express's handle. */
const seen: Record<string, boolean> = {};

beforeAll(async () => {
  const app = express();
  const classes = expressPrototypes(app);
  app.get("/probe", (req, res) => {
    seen.requestBuiltByClass = req instanceof classes.IncomingMessage;
    seen.responseBuiltByClass = res instanceof classes.ServerResponse;
    seen.requestIsNodes = req instanceof http.IncomingMessage;
    seen.responseIsNodes = res instanceof http.ServerResponse;
    res
      .status(201)
      .set("x-probe", req.get("x-in") ?? "")
      .json({ path: req.path, query: req.query.q, app: req.app === app });
  });
  server = http.createServer({ ...classes }, (req, res) => {
    const before = [Object.getPrototypeOf(req), Object.getPrototypeOf(res)];
    res.on("finish", () => {
      // express set the prototypes it wanted: they are the ones node built the objects with.
      seen.requestPrototypeKept = Object.getPrototypeOf(req) === before[0] && before[0] === app.request;
      seen.responsePrototypeKept = Object.getPrototypeOf(res) === before[1] && before[1] === app.response;
    });
    app(req, res);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => {
  server.closeAllConnections();
  server.close();
});

describe("expressPrototypes", () => {
  it("serves express handlers with express's request and response methods", async () => {
    const response = await fetch(`${origin}/probe?q=1`, { headers: { "x-in": "hello" } });
    assert.equal(response.status, 201);
    assert.equal(response.headers.get("x-probe"), "hello");
    assert.deepEqual(await response.json(), { path: "/probe", query: "1", app: true });
  });

  it("builds objects that express does not have to re-prototype, still node's own classes", async () => {
    await (await fetch(`${origin}/probe`)).text();
    assert.deepEqual(seen, {
      requestBuiltByClass: true,
      responseBuiltByClass: true,
      requestIsNodes: true,
      responseIsNodes: true,
      requestPrototypeKept: true,
      responsePrototypeKept: true,
    });
  });
});
