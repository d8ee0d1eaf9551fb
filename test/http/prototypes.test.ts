/**
 * expressPrototypes(): node:http builds each request and response with express's own
 * prototypes, so express's app.handle finds them already in place (the point of it), and
 * the objects are still node's IncomingMessage and ServerResponse with express's methods.
 */
import assert from "node:assert/strict";
import http from "node:http";
import { afterAll, beforeAll, describe, it } from "vitest";
import express from "express";
import { expressPrototypes, servesWith } from "../../server/http/prototypes.ts";
import { listenLocally, type Listening } from "../../harness/listen.ts";

let server: Listening;
/** A second listener, as the metrics port: its own express app, the first app's classes. */
let second: Listening;
let secondKeptShape: boolean | undefined;
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
  server = await listenLocally(
    http.createServer({ ...classes }, (req, res) => {
      const before = [Object.getPrototypeOf(req), Object.getPrototypeOf(res)];
      res.on("finish", () => {
        // express set the prototypes it wanted: they are the ones node built the objects with.
        seen.requestPrototypeKept = Object.getPrototypeOf(req) === before[0] && before[0] === app.request;
        seen.responsePrototypeKept = Object.getPrototypeOf(res) === before[1] && before[1] === app.response;
      });
      app(req, res);
    }),
  );

  const other = express();
  servesWith(other, classes);
  other.get("/metrics", (req, res) => {
    secondKeptShape =
      req instanceof classes.IncomingMessage &&
      Object.getPrototypeOf(req) === classes.IncomingMessage.prototype &&
      Object.getPrototypeOf(res) === classes.ServerResponse.prototype;
    res.status(200).json({ path: req.path });
  });
  second = await listenLocally(http.createServer({ ...classes }, other));
});

afterAll(async () => {
  await server.close();
  await second.close();
});

describe("expressPrototypes", () => {
  it("serves express handlers with express's request and response methods", async () => {
    const response = await fetch(`${server.origin}/probe?q=1`, { headers: { "x-in": "hello" } });
    assert.equal(response.status, 201);
    assert.equal(response.headers.get("x-probe"), "hello");
    assert.deepEqual(await response.json(), { path: "/probe", query: "1", app: true });
  });

  it("builds objects that express does not have to re-prototype, still node's own classes", async () => {
    await (await fetch(`${server.origin}/probe`)).text();
    assert.deepEqual(seen, {
      requestBuiltByClass: true,
      responseBuiltByClass: true,
      requestIsNodes: true,
      responseIsNodes: true,
      requestPrototypeKept: true,
      responsePrototypeKept: true,
    });
  });

  it("lets a second express app serve objects of the same classes without giving them other prototypes", async () => {
    const response = await fetch(`${second.origin}/metrics`);
    assert.deepEqual(await response.json(), { path: "/metrics" });
    assert.equal(secondKeptShape, true);
  });
});

describe("res.json on the classes", () => {
  /** An app answering `res.status(?status).json(body)`, optionally with a Content-Type set first. */
  function jsonApp(): express.Express {
    const app = express();
    app.set("etag", false);
    app.set("x-powered-by", false);
    app.all("/json", (req, res) => {
      if (req.query.type) res.type(String(req.query.type));
      res.status(Number(req.query.status ?? 200)).json({ text: "héllo <b>", n: 1, list: [null, true] });
    });
    return app;
  }

  /** Status, headers as sent (names and values, Date left out) and body bytes. */
  function raw(url: string, method: string, headers: Record<string, string>): Promise<string> {
    return new Promise((resolve, reject) => {
      const request = http.request(url, { method, headers, agent: false }, (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (c: Buffer) => chunks.push(c));
        response.on("end", () => {
          const sent = response.rawHeaders.filter((_, i, all) => all[i - (i % 2)]!.toLowerCase() !== "date");
          resolve(`${response.statusCode}\n${sent.join("\n")}\n\n${Buffer.concat(chunks).toString("latin1")}`);
        });
      });
      request.on("error", reject);
      request.end();
    });
  }

  it("answers with the same bytes as express's own json, in the common case and every other", async () => {
    const plain = await listenLocally(http.createServer(jsonApp()));
    const fast = jsonApp();
    const classed = await listenLocally(http.createServer({ ...expressPrototypes(fast) }, fast));
    try {
      const cases: [string, string, Record<string, string>][] = [
        ["GET", "/json", {}],
        ["GET", "/json?status=400", {}],
        ["POST", "/json?status=500", {}],
        ["HEAD", "/json", {}],
        ["GET", "/json?status=204", {}],
        ["GET", "/json?status=205", {}],
        ["GET", "/json?status=304", {}],
        ["GET", "/json?type=application/problem%2Bjson", {}],
        ["GET", "/json", { "if-none-match": "*" }],
        ["GET", "/json", { "if-modified-since": new Date(0).toUTCString() }],
      ];
      for (const [method, path, headers] of cases) {
        const expected = await raw(plain.origin + path, method, headers);
        assert.equal(await raw(classed.origin + path, method, headers), expected, `${method} ${path}`);
      }
    } finally {
      await plain.close();
      await classed.close();
    }
  });
});
