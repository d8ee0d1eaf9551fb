/**
 * The store: persistence, migrations, hashed keys, transactions, windows. SQLite, or
 * PostgreSQL with TEST_STORE=postgres (harness/test-store.ts); the few tests about the
 * SQLite file itself run on SQLite only (test/store/postgres.test.ts has PostgreSQL's).
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterEach, beforeEach, describe, it } from "vitest";
import { skipping } from "../support/skip.ts";
import { fromStoreError, storeErrorCode } from "../../server/http/store-errors.ts";
import { apiKeyRecord, hashApiKeySecret, issueApiKey } from "../../server/store/api-keys.ts";
import { StoreError } from "../../server/store/errors.ts";
import { DATABASE_FILE } from "../../server/store/sqlite.ts";
import { storeCall } from "../../server/store/sqlite/database.ts";
import { appliedVersions, MIGRATIONS } from "../../server/store/sqlite/migrations.ts";
import type { Store } from "../../server/store/store.ts";
import { onPostgres, openTestStore } from "../../harness/test-store.ts";

const SQLITE_ONLY = { skip: skipping(onPostgres && "about the SQLite file") };

let dir: string;
let store: Store;

beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "store-test-"));
  store = await openTestStore(dir);
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function rejectsWith(promise: Promise<unknown>, code: string): Promise<void> {
  // The code the HTTP edge answers the store's refusal with.
  return assert.rejects(promise, (error: unknown) => error instanceof StoreError && storeErrorCode(error) === code);
}

describe("persistence", () => {
  it("accounts, keys and charges survive close and reopen", async () => {
    await store.accounts.create({
      id: "acme",
      balanceMicros: 5_000_000,
      allowedModels: ["tiny-chat"],
      budgetMicros: 2_000_000,
    });
    const { key, secret } = await issueApiKey(store, "acme");
    await store.usage.charge({
      accountId: "acme",
      keyId: key.id,
      kind: "inference",
      amountMicros: 1_500_000,
      at: new Date(),
    });
    await store.close();

    store = await openTestStore(dir);
    const acme = await store.accounts.get("acme");
    assert.equal(acme?.balanceMicros, 3_500_000);
    assert.deepEqual(acme?.allowedModels, ["tiny-chat"]);
    assert.equal(acme?.budgetMicros, 2_000_000);
    assert.equal((await store.apiKeys.findBySecretHash(hashApiKeySecret(secret)))?.id, key.id);
    assert.equal(await store.usage.spentSince("acme", new Date(0)), 1_500_000);
  });

  it("the file is DATA_DIR/service.db in WAL mode", SQLITE_ONLY, async () => {
    await store.accounts.create({ id: "acme" });
    const db = new DatabaseSync(path.join(dir, DATABASE_FILE));
    try {
      assert.deepEqual({ ...db.prepare("PRAGMA journal_mode").get() }, { journal_mode: "wal" });
      assert.equal(db.prepare("SELECT count(*) AS n FROM accounts").get()?.n, 1);
    } finally {
      db.close();
    }
  });

  it("two connections to the same file, as two processes would have, see each other's writes", async () => {
    const other = await openTestStore(dir);
    try {
      await other.accounts.create({ id: "globex" });
      assert.equal((await store.accounts.get("globex"))?.id, "globex");
    } finally {
      await other.close();
    }
  });
});

describe("migrations", () => {
  it("are recorded in order in the version table, once", SQLITE_ONLY, async () => {
    await store.close();
    store = await openTestStore(dir); // reopening applies nothing again
    const db = new DatabaseSync(path.join(dir, DATABASE_FILE));
    try {
      assert.deepEqual(
        appliedVersions(db),
        MIGRATIONS.map((m) => m.version),
      );
    } finally {
      db.close();
    }
  });
});

describe("accounts", () => {
  it("take the defaults for fields left out", async () => {
    const acme = await store.accounts.create({ id: "acme" });
    assert.equal(acme.suspended, false);
    assert.equal(acme.balanceMicros, 0);
    assert.equal(acme.allowedModels, null);
    assert.equal(acme.fineTuningEnabled, true);
    assert.ok(acme.createdAt instanceof Date);
  });

  it("a duplicate id is ALREADY_EXISTS", async () => {
    await store.accounts.create({ id: "acme" });
    await rejectsWith(store.accounts.create({ id: "acme" }), "ALREADY_EXISTS");
  });

  it("update changes only the given fields; a missing account is NOT_FOUND", async () => {
    await store.accounts.create({ id: "acme", balanceMicros: 7, requestsPerMinute: 10 });
    const updated = await store.accounts.update("acme", {
      suspended: true,
      requestsPerMinute: null,
      acceptedAgreementVersion: "v1",
    });
    assert.equal(updated.suspended, true);
    assert.equal(updated.requestsPerMinute, null);
    assert.equal(updated.acceptedAgreementVersion, "v1");
    assert.equal(updated.balanceMicros, 7);
    await rejectsWith(store.accounts.update("nobody", { suspended: true }), "NOT_FOUND");
  });

  it("list is oldest first", async () => {
    await store.accounts.create({ id: "b" });
    await store.accounts.create({ id: "a" });
    const ids = (await store.accounts.list()).map((a) => a.id);
    assert.equal(ids.length, 2);
    assert.deepEqual(new Set(ids), new Set(["a", "b"]));
  });
});

describe("API keys", () => {
  it("the secret is stored nowhere on disk, only its hash", SQLITE_ONLY, async () => {
    await store.accounts.create({ id: "acme" });
    const { secret } = await issueApiKey(store, "acme");
    await store.close();
    store = await openTestStore(dir);
    const files = readdirSync(dir).map((f) => readFileSync(path.join(dir, f)).toString("latin1"));
    const randomPart = secret.slice(secret.lastIndexOf("-") + 1);
    assert.ok(
      files.every((content) => !content.includes(randomPart)),
      "the raw key is in a database file",
    );
    // The same scan does find the hash: it really reads what the store wrote.
    assert.ok(files.some((content) => content.includes(hashApiKeySecret(secret))));
  });

  it("ids are key_…, the hint shows only the ends of the secret", async () => {
    await store.accounts.create({ id: "acme" });
    const { key, secret } = await issueApiKey(store, "acme");
    assert.match(key.id, /^key_[0-9a-f]{24}$/);
    assert.match(secret, /^sk-acme-[0-9a-f]{64}$/);
    assert.equal(key.hint, `sk-acme-…${secret.slice(-4)}`);
  });

  it("a key for a missing account is NOT_FOUND", async () => {
    await rejectsWith(store.apiKeys.create(apiKeyRecord("nobody", "sk-nobody-xxxxxxxxxxxxxxxxxxxx")), "NOT_FOUND");
  });

  it("revoke keeps the key, marked, and keeps the first time", async () => {
    await store.accounts.create({ id: "acme" });
    const { key, secret } = await issueApiKey(store, "acme");
    const revoked = await store.apiKeys.revoke(key.id);
    assert.ok(revoked.revokedAt instanceof Date);
    assert.equal((await store.apiKeys.revoke(key.id)).revokedAt?.getTime(), revoked.revokedAt.getTime());
    assert.ok((await store.apiKeys.findBySecretHash(hashApiKeySecret(secret)))?.revokedAt);
    assert.deepEqual(
      (await store.apiKeys.list("acme")).map((k) => k.id),
      [key.id],
    );
    await rejectsWith(store.apiKeys.revoke("key_missing"), "NOT_FOUND");
  });
});

describe("transactions", () => {
  it("a charge updates the balance and records the spend together", async () => {
    await store.accounts.create({ id: "acme", balanceMicros: 1_000 });
    assert.deepEqual(
      await store.usage.charge({
        accountId: "acme",
        keyId: null,
        kind: "inference",
        amountMicros: 1_500,
        at: new Date(),
      }),
      {
        balanceMicros: -500,
      },
    );
    assert.equal(await store.usage.spentSince("acme", new Date(0)), 1_500);
  });

  it("a charge that fails half-way leaves the balance untouched", async () => {
    await store.accounts.create({ id: "acme", balanceMicros: 1_000 });
    // The balance update succeeds, then the record fails (no such key): both roll back.
    await assert.rejects(
      store.usage.charge({
        accountId: "acme",
        keyId: "key_missing",
        kind: "inference",
        amountMicros: 400,
        at: new Date(),
      }),
    );
    assert.equal((await store.accounts.get("acme"))?.balanceMicros, 1_000);
    assert.equal(await store.usage.spentSince("acme", new Date(0)), 0);
  });

  it("a charge to a missing account is NOT_FOUND and records nothing", async () => {
    await rejectsWith(
      store.usage.charge({ accountId: "nobody", keyId: null, kind: "x", amountMicros: 1, at: new Date() }),
      "NOT_FOUND",
    );
  });

  it("a batch of charges: each account pays the sum of its charges once, every charge is recorded, a missing account's are NOT_FOUND", async () => {
    await store.accounts.create({ id: "acme", balanceMicros: 1_000 });
    await store.accounts.create({ id: "globex", balanceMicros: 50 });
    const at = new Date(5_000);
    const charge = (accountId: string, amountMicros: number) => ({
      accountId,
      keyId: null,
      kind: "x",
      amountMicros,
      at,
    });
    const outcomes = await store.usage.chargeMany([
      charge("acme", 100),
      charge("nobody", 7),
      charge("globex", 20),
      charge("acme", 300),
      charge("acme", 4),
    ]);
    assert.deepEqual(outcomes.slice(0, 1), [{ type: "charged", balanceMicros: 596 }]);
    const refused = outcomes[1];
    assert.equal(refused?.type, "refused");
    assert.equal(storeErrorCode(refused.error), "NOT_FOUND");
    assert.deepEqual(outcomes.slice(2), [
      { type: "charged", balanceMicros: 30 },
      { type: "charged", balanceMicros: 596 },
      { type: "charged", balanceMicros: 596 },
    ]);
    assert.equal((await store.accounts.get("acme"))?.balanceMicros, 596);
    assert.equal((await store.accounts.get("globex"))?.balanceMicros, 30);
    assert.equal(await store.usage.spentSince("acme", new Date(0)), 404);
    assert.equal(await store.usage.spentSince("nobody", new Date(0)), 0);
  });

  it("an import that fails on its last key creates no account", async () => {
    const key = apiKeyRecord("acme", "sk-dev-acme-000000000000000000");
    const entries = [
      { account: { id: "acme" }, keys: [key] },
      { account: { id: "globex" }, keys: [{ ...key, accountId: "globex" }] }, // same id and secret: a duplicate
    ];
    await rejectsWith(store.accounts.importIfEmpty(entries), "ALREADY_EXISTS");
    assert.deepEqual(await store.accounts.list(), []);
  });

  it("an import happens only into an empty store", async () => {
    assert.equal(await store.accounts.importIfEmpty([{ account: { id: "acme" }, keys: [] }]), true);
    assert.equal(await store.accounts.importIfEmpty([{ account: { id: "globex" }, keys: [] }]), false);
    assert.deepEqual(
      (await store.accounts.list()).map((a) => a.id),
      ["acme"],
    );
  });
});

describe("spend", () => {
  it("counts charges at or after the given time only", async () => {
    await store.accounts.create({ id: "acme" });
    const charge = (at: number, amountMicros: number) =>
      store.usage.charge({ accountId: "acme", keyId: null, kind: "x", amountMicros, at: new Date(at) });
    await charge(1_000, 1);
    await charge(2_000, 10);
    await charge(3_000, 100);
    assert.equal(await store.usage.spentSince("acme", new Date(2_000)), 110);
    assert.equal(await store.usage.spentSince("globex", new Date(0)), 0);
  });

  it("a charge is a whole, non-negative number of micro-units", async () => {
    await store.accounts.create({ id: "acme" });
    await assert.rejects(
      store.usage.charge({ accountId: "acme", keyId: null, kind: "x", amountMicros: 0.5, at: new Date() }),
      RangeError,
    );
    await assert.rejects(
      store.usage.charge({ accountId: "acme", keyId: null, kind: "x", amountMicros: -1, at: new Date() }),
      RangeError,
    );
  });
});

describe("rate windows", () => {
  it("count requests in a window that starts at the first one and lasts its length", async () => {
    await store.accounts.create({ id: "acme" });
    await store.accounts.create({ id: "globex" });
    const hit = (account: string, at: number) => store.rateWindows.hit(account, new Date(at), 60_000);
    assert.deepEqual(await hit("acme", 10_000), { start: new Date(10_000), count: 1 });
    assert.deepEqual(await hit("acme", 69_999), { start: new Date(10_000), count: 2 });
    assert.deepEqual(await hit("globex", 20_000), { start: new Date(20_000), count: 1 });
    assert.deepEqual(await hit("acme", 70_000), { start: new Date(70_000), count: 1 });
  });
});

describe("storage failures", () => {
  it("a database that stays locked is 503 STORAGE_UNAVAILABLE with Retry-After", SQLITE_ONLY, async () => {
    const busy = Object.assign(new Error("database is locked"), { code: "ERR_SQLITE_ERROR", errcode: 5 });
    await assert.rejects(
      storeCall(() => {
        throw busy;
      }),
      (error: unknown) => {
        if (!(error instanceof StoreError)) return false;
        const answer = fromStoreError(error); // what the HTTP edge sends
        return answer.code === "STORAGE_UNAVAILABLE" && answer.status === 503 && answer.retryAfter === 1;
      },
    );
  });
});
