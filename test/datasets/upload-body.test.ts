/**
 * An upload's body when its client hung up before the route began to read it (the route
 * awaits the store first: on PostgreSQL, long enough for that to happen). Before the fix a
 * form upload then never settled, and the server's shutdown waited on it for ever.
 */
import assert from "node:assert/strict";
import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import express from "express";
import { afterEach, describe, it } from "vitest";
import { uploadBody } from "../../server/datasets/upload-body.ts";
import { writeFileDurably } from "../../server/datasets/files.ts";
import os from "node:os";
import path from "node:path";
import { mkdtempSync, rmSync } from "node:fs";

const BODIES = {
  raw: { type: "application/jsonl", body: '{"a":1}\n' },
  form: {
    type: "multipart/form-data; boundary=XX",
    body: '--XX\r\nContent-Disposition: form-data; name="file"; filename="rows.jsonl"\r\n\r\n{"a":1}\n',
  },
};

let cleanup: (() => void)[] = [];
afterEach(() => {
  for (const step of cleanup.reverse()) step();
  cleanup = [];
});

/** Reads an upload's body after its client is gone: what the read came to, or "never settled". */
async function readAfterHangUp(kind: keyof typeof BODIES): Promise<string> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "upload-body-"));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  let arrived!: () => void;
  const handlerStarted = new Promise<void>((resolve) => (arrived = resolve));
  const outcome = new Promise<string>((resolve) => {
    const app = express();
    app.post("/upload", async (req, res) => {
      arrived();
      // The store call during which the client goes: wait until it has (a listener, not
      // events.once, which would reject with the request's own "aborted" error).
      if (!req.destroyed) await new Promise((resolve) => req.once("close", resolve));
      const read = (async () => {
        const body = await uploadBody(req);
        await writeFileDurably(body.rows, path.join(dir, "rows.jsonl"), 1_000_000);
        await body.finished;
      })().then(
        () => "read",
        (error: Error) => `refused: ${error.message}`,
      );
      const timer = setTimeout(() => resolve("never settled"), 5_000);
      resolve(await read);
      clearTimeout(timer);
      res.destroy();
    });
    const server = http.createServer(app).listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      const { type, body } = BODIES[kind];
      const client = net.connect(port, "127.0.0.1", () => {
        // Declares more than it sends, and hangs up once the route has the request.
        client.write(
          `POST /upload HTTP/1.1\r\nHost: a\r\nContent-Type: ${type}\r\nContent-Length: 1000\r\n\r\n${body}`,
        );
        void handlerStarted.then(() => client.destroy());
      });
      cleanup.push(() => client.destroy());
    });
    cleanup.push(() => server.close());
  });
  return outcome;
}

describe("an upload whose client hung up before the route read it", () => {
  for (const kind of ["raw", "form"] as const) {
    it(`${kind}: the read is refused at once, it does not wait for ever`, async () => {
      assert.match(await readAfterHangUp(kind), /^refused: /);
    });
  }
});
