/**
 * Requests per minute counted in process (server/store/cache/rate-counter.ts): one process
 * is exact; N processes sharing one store's window admit at most
 * limit + (N − 1) × allowance in a window. Each "process" is a counter over its own store
 * connection, as a server process has. SQLite, or PostgreSQL with TEST_STORE=postgres.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { afterAll, beforeAll, describe, it } from "vitest";
import { RateCounter, rateAllowance } from "../../server/store/cache/rate-counter.ts";
import type { Store } from "../../server/store/store.ts";
import { openTestStore } from "../../harness/test-store.ts";

const MINUTE = 60_000;
let dir: string;
const stores: Store[] = [];
let n = 0;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "rate-counter-"));
  for (let i = 0; i < 3; i++) stores.push(await openTestStore(dir));
});
afterAll(async () => {
  for (const store of stores) await store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function newAccount(): Promise<string> {
  const id = `tenant-${++n}`;
  await stores[0]!.accounts.create({ id });
  return id;
}

/** Sends `requests` at once, spread round-robin over the counters; returns how many were admitted. */
async function burst(
  counters: RateCounter[],
  accountId: string,
  limit: number,
  requests: number,
  nowMs: number,
): Promise<number> {
  const answers = await Promise.all(
    Array.from({ length: requests }, (_, i) => counters[i % counters.length]!.admit(accountId, limit, nowMs)),
  );
  return answers.filter((a) => a.allowed).length;
}

describe("requests per minute counted in process", () => {
  it("one process admits exactly the limit, then refuses until the window ends", async () => {
    const account = await newAccount();
    const counter = new RateCounter(stores[0]!.rateWindows, MINUTE);
    const now = Date.now();
    assert.equal(await burst([counter], account, 100, 150, now), 100);
    const refused = await counter.admit(account, 100, now + 1_000);
    assert.deepEqual(refused, { allowed: false, windowEndMs: now + MINUTE });
    assert.equal((await counter.admit(account, 100, now + MINUTE)).allowed, true, "a new window");
  });

  it("one process, requests one after another: exact, with the store written far less than once a request", async () => {
    const account = await newAccount();
    let writes = 0;
    const windows = stores[0]!.rateWindows;
    const counter = new RateCounter({ hit: (...args) => (writes++, windows.hit(...args)) }, MINUTE);
    const now = Date.now();
    let admitted = 0;
    for (let i = 0; i < 700; i++) if ((await counter.admit(account, 600, now)).allowed) admitted++;
    assert.equal(admitted, 600);
    assert.ok(writes <= 600 / rateAllowance(600) + 2, `${writes} writes for 700 requests`);
  });

  for (const processes of [2, 3]) {
    it(`${processes} processes admit less than limit + ${processes} × allowance in a window`, async () => {
      const limit = 200;
      const account = await newAccount();
      const counters = stores.slice(0, processes).map((store) => new RateCounter(store.rateWindows, MINUTE));
      const now = Date.now();
      // Several rounds, so that counters with stale views keep admitting while the others write.
      let admitted = 0;
      for (let round = 0; round < 6; round++) admitted += await burst(counters, account, limit, 60, now + round);
      await Promise.all(counters.map((c) => c.flush()));
      // (N − 1) × allowance when writes are answered in commit order; writes that overtake
      // each other (PostgreSQL under load) add a little, never a whole allowance (README).
      const bound = limit + processes * rateAllowance(limit) - 1;
      assert.ok(admitted <= bound, `${admitted} admitted, bound ${bound}`);
      assert.ok(admitted >= limit - (processes - 1) * rateAllowance(limit), `${admitted} admitted: too few`);
      const stored = await stores[0]!.rateWindows.hit(account, new Date(now + 10), MINUTE, 0);
      assert.ok(stored.count >= admitted, `the store counted ${stored.count}, at least every admitted request`);
    });
  }

  it("flush() also waits for a write its timer began: after it, the store has every admitted request", async () => {
    const account = await newAccount();
    const windows = stores[0]!.rateWindows;
    // A slow store (PostgreSQL under load): the timer's write is still under way when flush() is called.
    const slow = { hit: (...args: Parameters<typeof windows.hit>) => delay(100).then(() => windows.hit(...args)) };
    const counter = new RateCounter(slow, MINUTE, 10);
    const now = Date.now();
    // The first request learns the window from the store; the second is admitted in process.
    for (let i = 0; i < 2; i++) assert.equal((await counter.admit(account, 100, now)).allowed, true);
    await delay(30); // the timer (10 ms) has begun its write, which takes 100 ms
    await counter.flush();
    const stored = await windows.hit(account, new Date(now + 1), MINUTE, 0);
    assert.equal(stored.count, 2, "both admitted requests are in the store when flush() returns");
  });

  it("a window that ended is started afresh by the next request", async () => {
    const account = await newAccount();
    const [a, b] = [new RateCounter(stores[0]!.rateWindows, 1_000), new RateCounter(stores[1]!.rateWindows, 1_000)];
    const now = Date.now();
    assert.equal(await burst([a, b], account, 10, 20, now), 10);
    assert.equal(await burst([a, b], account, 10, 20, now + 1_000), 10);
  });
});
