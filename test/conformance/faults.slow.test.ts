/**
 * The fault matrix: proves that the conformance kit catches faults. One reference server;
 * per fault of conformance/faults/catalogue.ts a proxy in front of it that breaks exactly
 * that rule; the kit runs through the proxy (only the fault's areas, stopping at the first
 * failure) and must fail. Through a pass-through proxy the whole kit must pass.
 *
 * Before that, the proxy itself: it passes answers through byte for byte, streams stay
 * streams, and every fault of the catalogue really changes something on a scripted tour of
 * the API (so a fault the kit misses is the kit's gap, not a dead fault). The catalogue's
 * shape (rule ids, families, rules no fault breaks) is checked without servers in
 * faults-catalogue.test.ts.
 */
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, test } from "vitest";
import { FAULTS } from "../../conformance/faults/catalogue.ts";
import { runFaultMatrix, tourAccounts, type MatrixResult } from "../../conformance/faults/matrix.ts";
import { isPlainObject } from "../../conformance/matchers.ts";
import { parseEvents, startFaultProxy, type Fault } from "../../conformance/faults/proxy.ts";
import { prepareTour, runTour, runUpstreamTour, type TourFixtures } from "../../conformance/faults/tour.ts";
import {
  startReferenceServer,
  startUpstreamFaultServer,
  type Reference,
  type UpstreamFaultReference,
} from "../../harness/conformance-reference.ts";

let reference: Reference;
let upstreamReference: UpstreamFaultReference;
let server: Reference["server"];
beforeAll(async () => {
  reference = await startReferenceServer();
  upstreamReference = await startUpstreamFaultServer();
  server = reference.server;
});
afterAll(async () => {
  await reference?.close();
  await upstreamReference?.close();
});

describe("the proxy", () => {
  let upstream: http.Server;
  let upstreamOrigin: string;
  beforeAll(async () => {
    // An upstream with exact bytes (odd spacing) and a slow stream.
    upstream = http.createServer((req, res) => {
      if (req.url === "/v1/json") {
        res.writeHead(200, { "content-type": "application/json", "x-request-id": "req_1" });
        res.end('{ "a" :1,\n "b": [ 1, 2 ] }');
      } else if (req.url === "/v1/slow") {
        res.writeHead(200, { "content-type": "text/event-stream", "x-request-id": "req_2" });
        res.write('event: one\ndata: {"type":"one","n":1}\n\n');
        setTimeout(() => res.end('event: two\ndata: {"type":"two","n":2}\n\ndata: [DONE]\n\n'), 400);
      } else if (req.url?.startsWith("/v1/echo")) {
        const chunks: Buffer[] = [];
        req.on("data", (c: Buffer) => chunks.push(c));
        req.on("end", () => {
          res.writeHead(200, { "content-type": "application/json" });
          res.end(
            JSON.stringify({
              method: req.method,
              url: req.url,
              headers: req.headers,
              body: Buffer.concat(chunks).toString(),
            }),
          );
        });
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    upstreamOrigin = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => upstream.close(() => resolve())));

  const firstChunkAfter = async (url: string): Promise<{ firstMs: number; text: string }> => {
    const started = Date.now();
    const response = await fetch(url);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = "";
    let firstMs = -1;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (firstMs < 0) firstMs = Date.now() - started;
      text += decoder.decode(value, { stream: true });
    }
    return { firstMs, text };
  };

  test("an answer a fault leaves alone goes through byte for byte", async () => {
    const noop: Fault = { id: "noop", areas: [], rule: "", description: "", onResponse: () => undefined };
    const proxy = await startFaultProxy({ upstream: upstreamOrigin, fault: noop });
    try {
      const response = await fetch(`${proxy.baseUrl}/json`);
      assert.equal(await response.text(), '{ "a" :1,\n "b": [ 1, 2 ] }');
      assert.equal(response.headers.get("x-request-id"), "req_1");
      assert.equal(proxy.hits, 0);
    } finally {
      await proxy.close();
    }
  });

  test("streams stream: piped, and event by event with onEvent", async () => {
    const upper: Fault = {
      id: "upper",
      areas: [],
      rule: "",
      description: "",
      onEvent(event) {
        if (isPlainObject(event.json)) event.json.type = String(event.json.type).toUpperCase();
        return event;
      },
    };
    for (const fault of [undefined, upper]) {
      const proxy = await startFaultProxy({ upstream: upstreamOrigin, fault });
      try {
        const { firstMs, text } = await firstChunkAfter(`${proxy.baseUrl}/slow`);
        assert.ok(firstMs < 300, `first event after ${firstMs} ms`);
        const events = parseEvents(text);
        assert.deepEqual(
          events.map((e) => e.event),
          ["one", "two", undefined],
        );
        assert.equal(events[2]?.data, "[DONE]");
        if (fault)
          assert.deepEqual(
            events.map((e) => (isPlainObject(e.json) ? e.json.type : undefined)),
            ["ONE", "TWO", undefined],
          );
      } finally {
        await proxy.close();
      }
    }
  });

  test("a buffered stream is re-serialised event by event: event lines, JSON data, [DONE]", async () => {
    const drop: Fault = {
      id: "drop",
      areas: [],
      rule: "",
      description: "",
      onResponse(response) {
        response.events = response.events?.filter((e) => e.event !== "one");
        return response;
      },
    };
    const proxy = await startFaultProxy({ upstream: upstreamOrigin, fault: drop });
    try {
      const response = await fetch(`${proxy.baseUrl}/slow`);
      assert.match(response.headers.get("content-type") ?? "", /^text\/event-stream/);
      assert.equal(await response.text(), 'event: two\ndata: {"type":"two","n":2}\n\ndata: [DONE]\n\n');
      assert.equal(proxy.hits, 1);
    } finally {
      await proxy.close();
    }
  });

  test("requests are rewritten: method, path, query, headers and JSON body", async () => {
    const rewrite: Fault = {
      id: "rewrite",
      areas: [],
      rule: "",
      description: "",
      onRequest(request) {
        request.method = "PUT";
        request.path = "/v1/echo";
        request.query.set("x", "1");
        request.headers["x-added"] = "yes";
        if (isPlainObject(request.json)) request.json.store = false;
        return request;
      },
    };
    const proxy = await startFaultProxy({ upstream: upstreamOrigin, fault: rewrite });
    try {
      const response = await fetch(`${proxy.baseUrl}/anything`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"store": true}',
      });
      const echo = (await response.json()) as any;
      assert.equal(echo.method, "PUT");
      assert.equal(echo.url, "/v1/echo?x=1");
      assert.equal(echo.headers["x-added"], "yes");
      assert.deepEqual(JSON.parse(echo.body), { store: false });
      assert.equal(echo.headers["content-length"], String(echo.body.length));
    } finally {
      await proxy.close();
    }
  });

  test("through a pass-through proxy the reference server's stream is unchanged", async () => {
    const proxy = await startFaultProxy({ upstream: server.origin });
    try {
      const response = await fetch(`${proxy.baseUrl}/responses`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.keys.acme}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "tiny-chat", input: "Hi", store: false, stream: true, max_output_tokens: 8 }),
      });
      assert.match(response.headers.get("x-request-id") ?? "", /^req_/);
      const events = parseEvents(await response.text());
      assert.equal(events[0]?.event, "response.created");
      assert.equal(events.at(-1)?.event, "response.completed");
      events.forEach((e, i) => assert.equal(isPlainObject(e.json) ? e.json.sequence_number : undefined, i));
    } finally {
      await proxy.close();
    }
  });
});

describe("the kit catches every fault", () => {
  let result: MatrixResult;
  beforeAll(async () => {
    result = await runFaultMatrix({
      main: { origin: server.origin, profile: reference.profile, keys: server.keys },
      upstream: {
        origin: upstreamReference.server.origin,
        profile: upstreamReference.profile,
        keys: upstreamReference.server.keys,
      },
      stopOnFirstFailure: true,
      faultTimeouts: { pollMs: 8_000, jobMs: 10_000 },
    });
    console.log(
      `fault matrix score: ${result.caught}/${result.total} faults caught (${Math.round(result.durationMs / 1000)} s)`,
    );
    if (result.caught < result.total) console.log(result.summary);
  });

  test("with no fault, the whole kit passes", () => {
    assert.deepEqual(
      result.clean.map((c) => c.target),
      ["main", "upstream"],
    );
    for (const { target, report } of result.clean) {
      assert.equal(
        report.failed,
        0,
        `${target}: ${report.failures.map((f) => `${f.transcript} step ${f.step}: ${f.message}`).join("\n")}`,
      );
      assert.ok(report.passed > 0, target);
    }
  });

  test("every caught fault really fired (a failure without it would be the kit's flake, not a catch)", () => {
    const unfired = result.faults.filter((f) => f.caught && f.hits === 0);
    assert.deepEqual(
      unfired.map((f) => f.id),
      [],
      unfired
        .map((f) => `${f.id}: ${f.caughtBy.map((s) => `${s.transcript} step ${s.step}: ${s.message}`).join("; ")}`)
        .join("\n"),
    );
  });

  test("every fault is caught", async () => {
    const missed = result.faults.filter((f) => !f.caught);
    if (missed.length === 0) return;
    // Tell a fault the kit never reached from one that is dead: does it fire on a scripted tour?
    const fixtures: TourFixtures = await prepareTour(server.baseUrl, tourAccounts(server.keys), {
      chat: "tiny-chat",
      reasoning: "tiny-reasoner",
      base: "accounts/maas/models/tiny-chat",
    });
    const notes: string[] = [];
    for (const miss of missed) {
      const fault = FAULTS.find((f) => f.id === miss.id) as Fault;
      const target = fault.target === "upstream" ? upstreamReference.server : server;
      const proxy = await startFaultProxy({ upstream: target.origin, fault, keys: target.keys });
      try {
        if (fault.target === "upstream")
          await runUpstreamTour(proxy.baseUrl, target.keys.acme as string, upstreamReference.profile.faults);
        else await runTour(proxy.baseUrl, proxy.origin, tourAccounts(target.keys), fixtures);
      } finally {
        await proxy.close();
      }
      notes.push(
        `${miss.id} (${miss.rule}): ${miss.error ? `the kit could not run: ${miss.error.split("\n")[0]}` : `fired ${miss.hits}x in the kit's run, ${proxy.hits}x on the tour`}`,
      );
    }
    assert.fail(`${missed.length} of ${result.total} faults not caught:\n${notes.join("\n")}`);
  });
});
