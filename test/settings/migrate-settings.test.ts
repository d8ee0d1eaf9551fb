/**
 * `npm run migrate` opens PostgreSQL with the PG_* settings every other process uses. A
 * database host that accepts the connection and never answers shows it: with
 * PG_CONNECT_TIMEOUT_MS 300 the command gives up at once, where the default would wait 5 s.
 */
import assert from "node:assert/strict";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, it } from "vitest";
import { runUntilExit } from "../server/child-process.ts";

const scratch = mkdtempSync(path.join(os.tmpdir(), "migrate-settings-"));
const sockets = new Set<net.Socket>();
// Takes connections and says nothing: a frozen database host.
const silentHost = net.createServer((socket) => sockets.add(socket));
let port = 0;

beforeAll(async () => {
  silentHost.listen(0, "127.0.0.1");
  await once(silentHost, "listening");
  port = (silentHost.address() as net.AddressInfo).port;
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => silentHost.close(resolve));
  rmSync(scratch, { recursive: true, force: true });
});

it("PG_CONNECT_TIMEOUT_MS bounds the migration's wait for the database", async () => {
  const started = performance.now();
  const result = await runUntilExit("server/store/migrate.ts", [], {
    DATA_DIR: path.join(scratch, "data"),
    DATABASE_URL: `postgres://migrator@127.0.0.1:${port}/service`,
    PG_CONNECT_TIMEOUT_MS: "300",
  });
  const seconds = (performance.now() - started) / 1000;
  assert.equal(result.code, 1, result.stderr);
  assert.match(result.stderr, /^Migration failed: .*timeout/i);
  // The default connect timeout is 5 s; the process's own start-up takes well under 3 s.
  assert.ok(seconds < 4.5, `gave up after ${seconds.toFixed(1)} s: the setting was not applied`);
});
