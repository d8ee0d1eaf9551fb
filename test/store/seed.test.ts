/** The development seed: loaded once into an empty store, never in production. */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, it } from "vitest";
import { hashApiKeySecret } from "../../server/store/api-keys.ts";
import { assertDevSeedAllowed, DEV_SEED_PATH, loadDevSeed, parseDevSeed } from "../../server/store/seed.ts";
import { openTestStore } from "../../harness/test-store.ts";
import type { Store } from "../../server/store/store.ts";

interface SeedFile {
  accounts: { id: string; keys: string[]; suspended?: boolean; balance?: string }[];
}

const seed = JSON.parse(readFileSync(DEV_SEED_PATH, "utf8")) as SeedFile;

let dir: string;
let store: Store;

beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "seed-test-"));
  store = await openTestStore(dir);
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("the development seed file", () => {
  it("has the ordinary accounts acme and globex, a suspended one and one with zero balance", () => {
    const ids = seed.accounts.map((a) => a.id);
    assert.ok(ids.includes("acme") && ids.includes("globex"));
    assert.ok(seed.accounts.some((a) => a.suspended === true));
    assert.ok(seed.accounts.some((a) => a.balance === "0.00"));
  });

  it("has fixed demo keys, unique, in the sk-dev-<account>- form", () => {
    const keys = seed.accounts.flatMap((a) => a.keys.map((k) => [a.id, k] as const));
    assert.equal(new Set(keys.map(([, k]) => k)).size, keys.length);
    for (const [account, key] of keys) assert.match(key, new RegExp(`^sk-dev-${account}-[0-9]{32}$`));
  });
});

describe("loadDevSeed", () => {
  it("loads the accounts and their keys into an empty store", async () => {
    assert.equal(await loadDevSeed(store), true);
    const accounts = await store.accounts.list();
    assert.deepEqual(accounts.map((a) => a.id).sort(), seed.accounts.map((a) => a.id).sort());
    const acme = seed.accounts.find((a) => a.id === "acme")!;
    const key = await store.apiKeys.findBySecretHash(hashApiKeySecret(acme.keys[0]!));
    assert.equal(key?.accountId, "acme");
    assert.equal((await store.accounts.get("acme"))?.balanceMicros, 100_000_000);
    assert.equal((await store.accounts.get("initech"))?.suspended, true);
  });

  it("leaves a store that has accounts alone", async () => {
    await store.accounts.create({ id: "mine" });
    assert.equal(await loadDevSeed(store), false);
    assert.deepEqual(
      (await store.accounts.list()).map((a) => a.id),
      ["mine"],
    );
  });

  it("loads once across restarts", async () => {
    assert.equal(await loadDevSeed(store), true);
    await store.close();
    store = await openTestStore(dir);
    assert.equal(await loadDevSeed(store), false);
  });

  it("names the bad field of a broken seed", async () => {
    const file = path.join(dir, "bad-seed.json");
    writeFileSync(
      file,
      JSON.stringify({ accounts: [{ id: "x", keys: ["sk-dev-x-0000000000000000"], balance: "lots" }] }),
    );
    await assert.rejects(loadDevSeed(store, file), /accounts\[0\]\.balance/);
    assert.deepEqual(await store.accounts.list(), []);
  });

  it("parses every optional field", () => {
    const [entry] = parseDevSeed(
      {
        accounts: [
          {
            id: "x",
            keys: ["sk-dev-x-0000000000000000"],
            budget: "1.50",
            requestsPerMinute: 2,
            allowedModels: ["tiny-chat"],
            hasPaymentMethod: true,
            fineTuningEnabled: false,
            acceptedAgreementVersion: "v1",
          },
        ],
      },
      "test",
    );
    assert.deepEqual(
      { ...entry!.account },
      {
        id: "x",
        suspended: undefined,
        balanceMicros: undefined,
        budgetMicros: 1_500_000,
        requestsPerMinute: 2,
        allowedModels: ["tiny-chat"],
        acceptedAgreementVersion: "v1",
        hasPaymentMethod: true,
        fineTuningEnabled: false,
      },
    );
    assert.equal(entry!.keys[0]!.secretHash, hashApiKeySecret("sk-dev-x-0000000000000000"));
  });
});

describe("the production guard", () => {
  it("refuses the seed when NODE_ENV=production", () => {
    assert.throws(() => assertDevSeedAllowed({ NODE_ENV: "production" }), /Refusing to load the development seed/);
  });

  it("allows it otherwise", () => {
    assertDevSeedAllowed({});
    assertDevSeedAllowed({ NODE_ENV: "development" });
  });

  it("loadDevSeed itself refuses in production", async () => {
    const previous = process.env.NODE_ENV;
    process.env.NODE_ENV = "production";
    try {
      await assert.rejects(loadDevSeed(store), /NODE_ENV=production/);
    } finally {
      if (previous === undefined) delete process.env.NODE_ENV;
      else process.env.NODE_ENV = previous;
    }
    assert.deepEqual(await store.accounts.list(), []);
  });
});
