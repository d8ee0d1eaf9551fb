/**
 * patches/undici+*.patch: undici's `request()` handler (and its four siblings) keeps an
 * abort function made in `onRequestStart`. Written as `this.abort = (reason) => …`, V8's
 * parser marks the function literal for the old generation (a literal assigned straight to
 * a property is pretenured), so every upstream call left an old object pointing at its
 * young request objects: young collections kept them all, about 5 KiB a gateway request
 * was promoted, and the old generation filled until a mark-compact (bench/gateway.ts's
 * tail). The patch makes the same closure a local first. These tests pin that the patch is
 * applied, that V8 still behaves as the patch assumes, and that aborting a call behaves as
 * before.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import path from "node:path";
import { Pool } from "undici";
import { afterAll, beforeAll, describe, it } from "vitest";

const apiRequest = path.join(path.dirname(createRequire(import.meta.url).resolve("undici")), "lib/api/api-request.js");

/** Runs CommonJS `source` in a child node with V8's natives syntax (`%InYoungGeneration`), returning its stdout. */
function withNatives(source: string): string {
  return execFileSync(process.execPath, ["--allow-natives-syntax", "-e", source], { encoding: "utf8" }).trim();
}

describe("the patched request handler of undici", () => {
  it("makes the abort function it keeps in the young generation (the patch is applied)", () => {
    const young = withNatives(`
      const { RequestHandler } = require(${JSON.stringify(apiRequest)});
      const handler = new RequestHandler({ method: "GET" }, () => {});
      handler.onRequestStart({ abort() {} }, null);
      process.stdout.write(String(%InYoungGeneration(handler.abort)));
    `);
    assert.equal(young, "true");
  });

  it("relies on V8 still pretenuring a function literal assigned straight to a property", () => {
    // If this fails, V8 changed and the patch may no longer be needed.
    const young = withNatives(`
      const holder = {};
      holder.f = () => 1;
      process.stdout.write(String(%InYoungGeneration(holder.f)));
    `);
    assert.equal(young, "false");
  });

  describe("aborting a call, as before", () => {
    let server: http.Server;
    let pool: Pool;
    /** Answers held open until the end: /slow gets none, /body gets its headers and a first part. */
    const pending: http.ServerResponse[] = [];

    beforeAll(async () => {
      server = http.createServer((req, res) => {
        if (req.url === "/body") res.writeHead(200).write("part");
        pending.push(res);
      });
      server.listen(0, "127.0.0.1");
      await once(server, "listening");
      pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    });
    afterAll(async () => {
      for (const res of pending) res.destroy();
      await pool.close();
      server.close();
    });

    it("rejects with the signal's reason when aborted before the answer starts", async () => {
      const controller = new AbortController();
      const call = pool.request({ path: "/slow", method: "GET", signal: controller.signal });
      while (pending.length === 0) await new Promise((resolve) => setImmediate(resolve));
      const reason = new Error("caller left");
      controller.abort(reason);
      await assert.rejects(call, (error) => error === reason);
    });

    it("ends the body with the signal's reason when aborted while it is read", async () => {
      const controller = new AbortController();
      const response = await pool.request({ path: "/body", method: "GET", signal: controller.signal });
      assert.equal(response.statusCode, 200);
      const reason = new Error("caller left");
      controller.abort(reason);
      await assert.rejects(response.body.text(), (error) => error === reason);
    });
  });
});
