/**
 * The server's caches (server/store/cache/): a change made through another store handle
 * (as another process makes it) is seen within the stated bound, a change made through the
 * cached store at once; charges are committed in groups and every one resolves only once
 * it is in the store. SQLite, or PostgreSQL with TEST_STORE=postgres.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, it } from "vitest";
import { hashApiKeySecret, issueApiKey } from "../../server/store/api-keys.ts";
import { withCaches, type CachedStore } from "../../server/store/cache/cached-store.ts";
import { isStoreError } from "../../server/store/errors.ts";
import type { UsageCharge, VersionedStore } from "../../server/store/store.ts";
import { queuedJob } from "./records.ts";
import { openTestStore } from "../../harness/test-store.ts";

const BOUND_MS = 1_000;
let dir: string;
/** Another process's view: writes go straight to the database. */
let other: VersionedStore;
let cached: CachedStore;
let n = 0;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "cached-store-"));
  other = await openTestStore(dir);
  cached = withCaches(await openTestStore(dir));
  await cached.ready;
});
afterAll(async () => {
  await cached.close();
  await other.close();
  rmSync(dir, { recursive: true, force: true });
});

async function tenant(): Promise<{ id: string; secretHash: string; keyId: string }> {
  const id = `tenant-${++n}`;
  await other.accounts.create({ id, balanceMicros: 1_000_000 });
  const { secret, key } = await issueApiKey(other, id);
  return { id, secretHash: hashApiKeySecret(secret), keyId: key.id };
}

/** Polls `check` until it holds; returns how long that took. Fails past `limitMs`. */
async function within(limitMs: number, check: () => Promise<boolean>): Promise<number> {
  const started = performance.now();
  while (!(await check())) {
    assert.ok(performance.now() - started <= limitMs, `still not seen after ${limitMs} ms`);
    await sleep(10);
  }
  return performance.now() - started;
}

describe("changes made by another process", () => {
  it("a revoked key is seen within the bound", async () => {
    const t = await tenant();
    assert.equal((await cached.apiKeys.findBySecretHash(t.secretHash))?.revokedAt, null);
    await other.apiKeys.revoke(t.keyId);
    const took = await within(
      BOUND_MS,
      async () => (await cached.apiKeys.findBySecretHash(t.secretHash))?.revokedAt !== null,
    );
    console.log(`revocation seen after ${took.toFixed(0)} ms`);
  });

  it("a suspended account is seen within the bound", async () => {
    const t = await tenant();
    assert.equal((await cached.accounts.get(t.id))?.suspended, false);
    await other.accounts.update(t.id, { suspended: true });
    await within(BOUND_MS, async () => (await cached.accounts.get(t.id))?.suspended === true);
  });

  it("a new fine-tuned model is seen within the bound", async () => {
    const t = await tenant();
    assert.deepEqual(await cached.fineTuning.listModels(t.id), []);
    const job = await other.fineTuning.createJob(queuedJob(t.id));
    const model = {
      accountId: t.id,
      modelId: "m",
      baseModel: "tiny-chat",
      jobName: `accounts/${t.id}/trainingJobs/${job.job.jobId}`,
      adapterPath: "models/m.lora",
      createTime: new Date(),
    };
    assert.equal((await other.fineTuning.claimJob("runner", new Date(), 60_000))?.job.jobId, job.job.jobId);
    await other.fineTuning.completeJob(t.id, job.job.jobId, model, {}, "runner");
    await within(BOUND_MS, async () => (await cached.fineTuning.findModel(t.id, "m")) !== undefined);
  });

  it("a top-up, and another process's charges, reach the cached balance within the bound", async () => {
    const t = await tenant();
    assert.equal((await cached.accounts.get(t.id))?.balanceMicros, 1_000_000);
    await other.usage.charge(charge(t.id, 400_000));
    await other.accounts.update(t.id, { balanceMicros: 5_000_000 });
    await within(BOUND_MS + 100, async () => (await cached.accounts.get(t.id))?.balanceMicros === 5_000_000);
    await other.usage.charge(charge(t.id, 1_000));
    await within(BOUND_MS + 100, async () => (await cached.accounts.get(t.id))?.balanceMicros === 4_999_000);
  });

  it("the day's spend counts this process's charges at once and another's within the bound", async () => {
    const t = await tenant();
    const since = new Date(Date.now() - 60_000);
    assert.equal(await cached.usage.spentSince(t.id, since), 0);
    await cached.usage.charge(charge(t.id, 7));
    assert.equal(await cached.usage.spentSince(t.id, since), 7);
    await other.usage.charge(charge(t.id, 5));
    await within(BOUND_MS + 100, async () => (await cached.usage.spentSince(t.id, since)) === 12);
  });
});

describe("changes made through the cached store", () => {
  it("are seen by it at once", async () => {
    const t = await tenant();
    assert.equal((await cached.accounts.get(t.id))?.suspended, false);
    await cached.accounts.update(t.id, { suspended: true });
    assert.equal((await cached.accounts.get(t.id))?.suspended, true);
    assert.equal((await cached.apiKeys.findBySecretHash(t.secretHash))?.revokedAt, null);
    await cached.apiKeys.revoke(t.keyId);
    assert.notEqual((await cached.apiKeys.findBySecretHash(t.secretHash))?.revokedAt, null);
  });
});

describe("untrusted caches read through", () => {
  it("when the version cannot be read, nothing is answered from memory past the bound", async () => {
    let failing = false;
    const source = await openTestStore(dir);
    const flaky = withCaches(
      {
        ...source,
        cacheVersion: { current: () => (failing ? Promise.reject(new Error("down")) : source.cacheVersion.current()) },
      },
      { pollMs: 50, maxStaleMs: 200 },
    );
    try {
      await flaky.ready;
      const t = await tenant();
      assert.equal((await flaky.accounts.get(t.id))?.suspended, false);
      failing = true;
      await other.accounts.update(t.id, { suspended: true });
      await sleep(250);
      assert.equal((await flaky.accounts.get(t.id))?.suspended, true, "read from the store, not from memory");
    } finally {
      await flaky.close();
    }
  });
});

describe("group commit", () => {
  it("many charges at once go in few transactions, each resolving with its account's balance once committed", async () => {
    const [a, b] = [await tenant(), await tenant()];
    const source = await openTestStore(dir);
    const groups: number[] = [];
    const counted = withCaches({
      ...source,
      usage: {
        ...source.usage,
        chargeMany: (charges) => (groups.push(charges.length), source.usage.chargeMany(charges)),
      },
    });
    try {
      const results = await Promise.all(
        Array.from({ length: 100 }, (_, i) => counted.usage.charge(charge(i % 2 ? a.id : b.id, 10))),
      );
      assert.equal(
        groups.reduce((x, y) => x + y, 0),
        100,
      );
      assert.ok(groups.length <= 5, `${groups.length} transactions for 100 charges`);
      assert.equal(Math.min(...results.map((r) => r.balanceMicros)), 1_000_000 - 500);
      assert.equal((await other.accounts.get(a.id))?.balanceMicros, 1_000_000 - 500);
      assert.equal(await other.usage.spentSince(b.id, new Date(0)), 500);
    } finally {
      await counted.close();
    }
  });

  it("a charge for a missing account fails alone; the others in its group are recorded", async () => {
    const t = await tenant();
    const [good, missing] = await Promise.allSettled([
      cached.usage.charge(charge(t.id, 3)),
      cached.usage.charge(charge("nobody", 3)),
    ]);
    assert.equal(good.status, "fulfilled");
    assert.ok(missing.status === "rejected" && isStoreError(missing.reason, "not-found"));
    assert.equal(await other.usage.spentSince(t.id, new Date(0)), 3);
  });
});

function charge(accountId: string, amountMicros: number): UsageCharge {
  return { accountId, keyId: null, kind: "inference", amountMicros, at: new Date() };
}
