/**
 * What only the PostgreSQL store has to prove (the shared store suites run on it through
 * suites.test.ts): migrations applied once by processes starting together, a database that
 * does not answer is a fast 503 and never a hang, and the rules SQLite got from its single
 * writer still hold when many connections (as many processes) write at once.
 */
import assert from "node:assert/strict";
import { afterAll, beforeAll, describe, it } from "vitest";
import { skipping } from "../support/skip.ts";
import pg from "pg";
import { ownerAlive } from "../../server/datasets/owners.ts";
import { fromStoreError } from "../../server/http/store-errors.ts";
import { isStoreError, StoreError } from "../../server/store/errors.ts";
import { openPostgresStore, postgresStore, type PostgresStoreOptions } from "../../server/store/postgres.ts";
import { createPool, inTransaction, pgCall } from "../../server/store/postgres/database.ts";
import { appliedVersions, migrate, MIGRATIONS } from "../../server/store/postgres/migrations.ts";
import type { Store } from "../../server/store/store.ts";
import { newDataset, queuedJob as job } from "../store/records.ts";
import { freshSchemaUrl } from "../../harness/test-store.ts";
import { POSTGRES_SKIP } from "../../harness/postgres-cluster.ts";

const DATA_DIR = "/nonexistent-files-are-not-used-here";
const opened: Store[] = [];

async function newStore(url?: string, options = {}): Promise<{ store: Store; url: string }> {
  const schemaUrl = url ?? (await freshSchemaUrl());
  const store = await openPostgresStore(schemaUrl, DATA_DIR, options);
  opened.push(store);
  return { store, url: schemaUrl };
}

/** A store on `url` opened with `options`, holding the account acme. */
async function storeWithAcme(url: string, options: PostgresStoreOptions): Promise<Store> {
  const store = await openPostgresStore(url, DATA_DIR, options);
  opened.push(store);
  await store.accounts.create({ id: "acme" });
  return store;
}

/** Runs `body` while another connection holds the accounts table locked (ACCESS EXCLUSIVE) until `unlock` rolls it back. */
async function withAccountsLocked(url: string, body: (unlock: () => Promise<void>) => Promise<void>): Promise<void> {
  const blocker = new pg.Client({ connectionString: url });
  await blocker.connect();
  try {
    await blocker.query("BEGIN");
    await blocker.query("LOCK TABLE accounts IN ACCESS EXCLUSIVE MODE");
    await body(async () => {
      await blocker.query("ROLLBACK");
    });
  } finally {
    await blocker.end();
  }
}

function isUnavailable(error: unknown): boolean {
  if (!(error instanceof StoreError)) return false;
  const answer = fromStoreError(error); // what the HTTP edge sends
  return answer.code === "STORAGE_UNAVAILABLE" && answer.status === 503 && answer.retryAfter === 1;
}

describe("the PostgreSQL store", { skip: skipping(POSTGRES_SKIP) }, () => {
  afterAll(async () => {
    for (const store of opened) await store.close();
  });

  describe("migrations", () => {
    it("applied by five processes starting at once: each version once, in order", async () => {
      const url = await freshSchemaUrl();
      const pools = Array.from({ length: 5 }, () => createPool(url));
      try {
        const results = await Promise.all(pools.map((pool) => migrate(pool)));
        assert.deepEqual(
          results.flat().sort(),
          MIGRATIONS.map((m) => m.version).sort(),
          "every version applied by exactly one of them",
        );
        assert.deepEqual(
          await appliedVersions(pools[0] as pg.Pool),
          MIGRATIONS.map((m) => m.version),
        );
        assert.deepEqual(await migrate(pools[0] as pg.Pool), [], "nothing left to apply");
      } finally {
        await Promise.all(pools.map((pool) => pool.end()));
      }
    });

    it("a process told not to migrate refuses a schema that is behind", async () => {
      const url = await freshSchemaUrl();
      await assert.rejects(openPostgresStore(url, DATA_DIR, { migrate: false }), /schema is behind.*npm run migrate/);
      await newStore(url); // migrates
      await newStore(url, { migrate: false }); // now accepted
    });
  });

  describe("a database that does not answer", () => {
    it("nothing listening: 503 STORAGE_UNAVAILABLE at once, not a hang", async () => {
      const pool = createPool("postgres://postgres@127.0.0.1:1/postgres", {
        poolSize: 2,
        connectTimeoutMs: 1_000,
        statementTimeoutMs: 1_000,
      });
      const store = postgresStore(pool, DATA_DIR);
      try {
        const started = Date.now();
        await assert.rejects(store.accounts.get("acme"), isUnavailable);
        await assert.rejects(store.fineTuning.claimJob("w", new Date(), 1000), isUnavailable, "a transaction too");
        assert.ok(Date.now() - started < 3_000, `took ${Date.now() - started} ms`);
      } finally {
        await store.close();
      }
    });

    it("a lock held past the statement timeout: 503 within the timeout, then it works again", async () => {
      const { url } = await newStore();
      const store = await storeWithAcme(url, { statementTimeoutMs: 500 });
      await withAccountsLocked(url, async (unlock) => {
        const started = Date.now();
        await assert.rejects(store.accounts.get("acme"), isUnavailable);
        await assert.rejects(
          store.usage.charge({ accountId: "acme", keyId: null, kind: "x", amountMicros: 1, at: new Date() }),
          isUnavailable,
        );
        assert.ok(Date.now() - started < 3_000, `took ${Date.now() - started} ms`);
        await unlock();
        assert.equal((await store.accounts.get("acme"))?.id, "acme");
      });
    });

    it("a connection cut in the middle of a transaction: 503 for that call, no crash, the next call works", async () => {
      const { url } = await newStore();
      const pool = createPool(url, { poolSize: 2, connectTimeoutMs: 1_000, statementTimeoutMs: 2_000 });
      const killer = new pg.Client({ connectionString: url });
      await killer.connect();
      try {
        const cut = pgCall(() =>
          inTransaction(pool, async (db) => {
            const [row] = (await db.query("SELECT pg_backend_pid() AS pid")).rows as { pid: number }[];
            await killer.query("SELECT pg_terminate_backend($1)", [row?.pid]);
            // Checked out and between statements when the socket ends: the client emits
            // "error" with no query to fail, which ended the process when nobody listened.
            await new Promise((resolve) => setTimeout(resolve, 200));
            return db.query("SELECT 1");
          }),
        );
        await assert.rejects(cut, isUnavailable);
        assert.deepEqual((await pool.query("SELECT 1 AS one")).rows, [{ one: 1 }], "the pool gave a fresh connection");
      } finally {
        await killer.end();
        await pool.end();
      }
    });

    it("a pool with every connection busy: waiting for one ends in 503 after the connect timeout", async () => {
      const { url } = await newStore();
      const store = await storeWithAcme(url, { poolSize: 1, connectTimeoutMs: 300, statementTimeoutMs: 5_000 });
      await withAccountsLocked(url, async (unlock) => {
        const holding = store.accounts.get("acme"); // takes the only connection and waits on the lock
        await assert.rejects(store.accounts.list(), isUnavailable);
        await unlock();
        assert.equal((await holding)?.id, "acme");
      });
    });
  });

  describe("text PostgreSQL cannot hold", () => {
    it("a NUL character (U+0000) to store or to look up is 400 INVALID_REQUEST, not a bug, and the store goes on", async () => {
      const { store } = await newStore();
      await store.accounts.create({ id: "acme" });
      const refused = (error: unknown) => {
        assert.ok(isStoreError(error, "invalid-text"), String(error));
        const answer = fromStoreError(error).toBody() as { error: { code: string } };
        assert.equal(answer.error.code, "INVALID_REQUEST");
        return true;
      };
      await assert.rejects(store.datasets.get("acme", "a\u0000b"), refused);
      await assert.rejects(store.fineTuning.getJob("acme", "JOB_TYPE_SFT", "sft-\u0000"), refused);
      await assert.rejects(
        store.datasets.create({ ...newDataset("acme", "named"), displayName: "a\u0000b" }),
        refused,
        "a write, in its transaction",
      );
      await store.datasets.create(newDataset("acme", "named"));
      assert.equal((await store.datasets.get("acme", "named"))?.datasetId, "named");
    });
  });

  describe("many connections writing at once (as many processes)", () => {
    let a: Store;
    let b: Store;
    beforeAll(async () => {
      const first = await newStore();
      a = first.store;
      b = (await newStore(first.url)).store; // a second pool on the same schema: another process
      await a.accounts.create({ id: "acme", balanceMicros: 1_000_000 });
    });

    it("100 charges split over two processes: the balance and the spend are exact", async () => {
      await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          (i % 2 ? a : b).usage.charge({ accountId: "acme", keyId: null, kind: "x", amountMicros: 7, at: new Date() }),
        ),
      );
      assert.equal((await a.accounts.get("acme"))?.balanceMicros, 1_000_000 - 700);
      assert.equal(await b.usage.spentSince("acme", new Date(0)), 700);
    });

    it("60 requests in one rate window: counted 1 to 60, each once", async () => {
      const now = new Date();
      const windows = await Promise.all(
        Array.from({ length: 60 }, (_, i) => (i % 2 ? a : b).rateWindows.hit("acme", now, 60_000)),
      );
      assert.deepEqual(
        windows.map((w) => w.count).sort((x, y) => x - y),
        Array.from({ length: 60 }, (_, i) => i + 1),
      );
    });

    it("40 creations with 8 shared idempotency keys: 8 jobs, every answer the key's job", async () => {
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) => {
          const key = `key-${i % 8}`;
          const record = job("acme", { config: { ...job("acme").config, outputModelId: `idem-${key}` } });
          return (i % 2 ? a : b).fineTuning.createJob(record, { key, requestHash: `hash-${key}` });
        }),
      );
      assert.equal(results.filter((r) => r.created).length, 8);
      for (let i = 0; i < 40; i++) {
        const first = results.find((r, j) => j % 8 === i % 8 && r.created);
        assert.equal(results[i]?.job.jobId, first?.job.jobId);
      }
      const listed = await a.fineTuning.listJobs("acme", "JOB_TYPE_SFT", { limit: 100 });
      assert.equal(listed.jobs.filter((j) => j.config.outputModelId.startsWith("idem-")).length, 8);
    });

    it("10 creations of one output model id at once: one job, nine ALREADY_EXISTS", async () => {
      const outcomes = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) =>
          (i % 2 ? a : b).fineTuning.createJob(
            job("acme", { config: { ...job("acme").config, outputModelId: "the-one" } }),
          ),
        ),
      );
      assert.equal(outcomes.filter((o) => o.status === "fulfilled").length, 1);
      assert.ok(outcomes.every((o) => o.status === "fulfilled" || isStoreError(o.reason, "already-exists")));
    });

    it("12 workers claiming at once: every queued job claimed by exactly one", async () => {
      // Clear the queue left by the tests above, then queue six jobs.
      for (;;) {
        const claimed = await a.fineTuning.claimJob("sweeper", new Date(), 60_000);
        if (!claimed) break;
        await a.fineTuning.updateJob("acme", claimed.job.jobId, { state: "JOB_STATE_FAILED" });
      }
      const queued = [];
      for (let i = 0; i < 6; i++) queued.push((await a.fineTuning.createJob(job("acme"))).job.jobId);
      const claims = await Promise.all(
        Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).fineTuning.claimJob(`worker-${i}`, new Date(), 60_000)),
      );
      const claimed = claims.filter((c) => c !== undefined).map((c) => c.job.jobId);
      assert.deepEqual([...claimed].sort(), [...queued].sort(), "each job once, none twice");
      assert.equal(await b.fineTuning.claimJob("late", new Date(), 60_000), undefined);
    });

    it("a cancel and a runner's update racing: exactly one of them applies", async () => {
      const { job: created } = await a.fineTuning.createJob(job("acme"));
      await a.fineTuning.updateJob("acme", created.jobId, { state: "JOB_STATE_RUNNING" });
      const [cancel, finalize] = await Promise.all([
        a.fineTuning.updateJob("acme", created.jobId, { state: "JOB_STATE_CANCELLED" }, ["JOB_STATE_RUNNING"]),
        b.fineTuning.updateJob("acme", created.jobId, { state: "JOB_STATE_FINALIZING" }, ["JOB_STATE_RUNNING"]),
      ]);
      assert.equal([cancel, finalize].filter((r) => r !== undefined).length, 1);
    });

    it("two uploads to one dataset at once get versions 1 and 2", async () => {
      await a.datasets.create(newDataset("acme", "race"));
      const versions = await Promise.all(
        [a, b].map((s, i) => s.datasets.beginUpload("acme", "race", `h:1:${i}`, new Date())),
      );
      assert.deepEqual(versions.map((v) => v.versionNo).sort(), [1, 2]);
      assert.equal((await a.datasets.get("acme", "race"))?.latestVersionNo, 2);
    });
  });

  describe("owners on other hosts", () => {
    it("are alive while their heartbeat lasts, dead once it ran out or they were forgotten", async () => {
      const { store } = await newStore();
      const other = "another-host:4242:1b4e28ba-2fa1-11d2-883f-0016d3cca427";
      assert.equal(await ownerAlive(store, other), false, "never beat");
      await store.owners.heartbeat([other], new Date(Date.now() + 60_000));
      assert.equal(await ownerAlive(store, other), true);
      assert.equal(await ownerAlive(store, other, new Date(Date.now() + 120_000)), false, "its heartbeat ran out");
      await store.owners.forget(other);
      assert.equal(await ownerAlive(store, other), false);
    });
  });
});
