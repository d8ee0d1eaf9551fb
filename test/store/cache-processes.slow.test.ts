/**
 * The caches' bounds between real processes: two server processes (`node server/main.ts`)
 * on one store (the SQLite file in WAL mode, or PostgreSQL with TEST_STORE=postgres), and
 * changes made by other processes: this test's own store connection, and the admin command.
 * - a key revoked elsewhere is refused by both servers within 1 s of the revocation;
 * - an account suspended with `npm run admin` is refused by both within 1 s;
 * - kill -9 under paid load: the charge of every answered call is in the store.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, it } from "vitest";
import { issueApiKey } from "../../server/store/api-keys.ts";
import { costMicros } from "../../server/store/money.ts";
import type { VersionedStore } from "../../server/store/store.ts";
import { kill, startChild } from "../server/child-process.ts";
import { openTestStore, storeEnvFor } from "../../harness/test-store.ts";

const BOUND_MS = 1_000;
const ADMIN = fileURLToPath(new URL("../../server/admin/cli.ts", import.meta.url));
const QUIET = { LOG_LEVEL: "error" };

let dataDir: string;
let store: VersionedStore;
const keys: Record<string, { secret: string; id: string }> = {};

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), "cache-processes-"));
  store = await openTestStore(dataDir);
  for (const id of ["revokee", "suspendee", "payer"]) {
    await store.accounts.create({ id, balanceMicros: 1_000_000_000, hasPaymentMethod: true, requestsPerMinute: null });
    const issued = await issueApiKey(store, id);
    keys[id] = { secret: issued.secret, id: issued.key.id };
  }
});
afterAll(async () => {
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function status(baseUrl: string, key: string): Promise<number> {
  const response = await fetch(`${baseUrl}/models`, { headers: { authorization: `Bearer ${key}` } });
  await response.arrayBuffer();
  return response.status;
}

/** Asks every server until each answers `expected`; the time from `since` each first did. */
async function timesUntil(baseUrls: string[], key: string, expected: number, since: number): Promise<number[]> {
  return Promise.all(
    baseUrls.map(async (baseUrl) => {
      for (;;) {
        const sent = performance.now();
        if ((await status(baseUrl, key)) === expected) return sent - since;
        assert.ok(
          sent - since <= BOUND_MS,
          `a request sent ${(sent - since).toFixed(0)} ms after the change was still answered from the old state`,
        );
        await sleep(10);
      }
    }),
  );
}

describe("two server processes on one store", { timeout: 120_000 }, () => {
  let servers: Awaited<ReturnType<typeof startChild>>[] = [];
  const baseUrls = () => servers.map((s) => s.baseUrl);

  beforeAll(async () => {
    servers = await Promise.all([startChild(dataDir, QUIET), startChild(dataDir, QUIET)]);
  });
  afterAll(async () => {
    for (const server of servers) await kill(server.child);
  });

  it("a key revoked by another process is refused by both within 1 s", async () => {
    for (const baseUrl of baseUrls())
      assert.equal(await status(baseUrl, keys.revokee!.secret), 200, "cached as valid first");
    const since = performance.now();
    await store.apiKeys.revoke(keys.revokee!.id);
    const took = await timesUntil(baseUrls(), keys.revokee!.secret, 401, since);
    console.log(`revocation refused after ${took.map((t) => t.toFixed(0)).join(" and ")} ms`);
  });

  it("an account suspended with the admin command is refused by both within 1 s of the command's end", async () => {
    for (const baseUrl of baseUrls()) assert.equal(await status(baseUrl, keys.suspendee!.secret), 200);
    await promisify(execFile)(process.execPath, [ADMIN, "accounts", "suspend", "suspendee"], {
      env: { ...process.env, ...(await storeEnvFor(dataDir)) },
    });
    const took = await timesUntil(baseUrls(), keys.suspendee!.secret, 403, performance.now());
    console.log(`suspension refused after ${took.map((t) => t.toFixed(0)).join(" and ")} ms`);
  });

  it("kill -9 under paid load: every answered call's charge is recorded", async () => {
    const server = servers[0]!;
    const answered: number[] = [];
    let stop = false;
    const body = JSON.stringify({ model: "tiny-chat", input: "Hello!", store: false, max_output_tokens: 16 });
    const client = async () => {
      while (!stop) {
        try {
          const response = await fetch(`${server.baseUrl}/responses`, {
            method: "POST",
            headers: { "content-type": "application/json", authorization: `Bearer ${keys.payer!.secret}` },
            body,
          });
          const json = (await response.json()) as { usage?: { input_tokens: number; output_tokens: number } };
          assert.equal(response.status, 200, JSON.stringify(json));
          answered.push(costMicros("0.10", json.usage!.input_tokens + json.usage!.output_tokens));
        } catch (error) {
          if (stop) return; // the answer the kill cut off
          throw error;
        }
      }
    };
    const clients = Array.from({ length: 8 }, client);
    while (answered.length < 60) await sleep(5);
    stop = true;
    await kill(server.child);
    await Promise.all(clients);
    const owed = answered.reduce((a, b) => a + b, 0);
    const spent = await store.usage.spentSince("payer", new Date(0));
    const balance = (await store.accounts.get("payer"))?.balanceMicros;
    console.log(`${answered.length} calls answered, ${owed} micro-units owed for them, ${spent} recorded`);
    assert.ok(spent >= owed, `recorded ${spent}, but the answered calls cost ${owed}`);
    // At most the 8 calls in flight when it died were charged without an answer.
    assert.ok(spent <= owed + 8 * Math.max(...answered), `recorded ${spent} for ${owed} owed`);
    assert.equal(balance, 1_000_000_000 - spent, "the balance and the records agree");
  });
});
