/**
 * The runner's lease renewal through a store outage (server/finetune/lease-heartbeat.ts):
 * training goes on, with a warning, while the lease written last still holds; it stops
 * once that lease has run out unrenewed, or at once when the store says the job is gone.
 * The renewals are the store's calls as the runner makes them; the outage is a renew that
 * rejects (or never answers) for a while.
 */
import assert from "node:assert/strict";
import { setTimeout as delay } from "node:timers/promises";
import { describe, test } from "vitest";
import { LeaseHeartbeat } from "../../server/finetune/lease-heartbeat.ts";
import { StoreError } from "../../server/store/errors.ts";
import { captureLog } from "../ops/log-capture.ts";

const LEASE_MS = 300;
const outage = () => Promise.reject(new StoreError("unavailable", "The database is not answering. Retry shortly."));

/** A heartbeat over `renew`, with when (ms after its start) its lease was lost, and why. */
function heartbeat(renew: (until: Date) => Promise<boolean>) {
  const started = Date.now();
  const lost: { afterMs: number; reason: string }[] = [];
  const beat = new LeaseHeartbeat({
    job: "accounts/acme/supervisedFineTuningJobs/sft-1",
    leaseMs: LEASE_MS,
    heldUntil: started + LEASE_MS,
    renew,
    onLost: (reason) => lost.push({ afterMs: Date.now() - started, reason: reason.message }),
  });
  return { beat, lost };
}

describe("a store outage during lease renewal", () => {
  test("shorter than the lease: training goes on, each failed renewal is a warning, and renewals resume", async (t) => {
    const log = captureLog(t, { minLevel: "warn" });
    let down = true;
    let renewed = 0;
    const { beat, lost } = heartbeat(async () => {
      if (down) return outage();
      renewed++;
      return true;
    });
    try {
      await delay(LEASE_MS * 0.8);
      down = false;
      await delay(LEASE_MS * 2);
      assert.deepEqual(lost, [], "the lease was never lost");
      assert.ok(renewed >= 2, `renewed ${renewed} times after the outage`);
      const warnings = log.entries().filter((e) => e.event === "job.lease_renewal_failed");
      assert.ok(warnings.length >= 1, "the outage is in the log");
      assert.equal(warnings[0]?.level, "warn");
      assert.equal(warnings[0]?.detail, "The database is not answering. Retry shortly.");
      assert.equal(warnings[0]?.job, "accounts/acme/supervisedFineTuningJobs/sft-1");
    } finally {
      beat.stop();
    }
  });

  test("past the lease's end: the run stops, not before the lease ran out", async (t) => {
    const log = captureLog(t, { minLevel: "warn" });
    const { beat, lost } = heartbeat(outage);
    try {
      await delay(LEASE_MS * 3);
      assert.equal(lost.length, 1, "lost once");
      assert.match(lost[0]!.reason, /lease ran out while the store could not be reached/);
      assert.ok(lost[0]!.afterMs >= LEASE_MS, `stopped after ${lost[0]!.afterMs} ms, the lease held ${LEASE_MS} ms`);
      assert.ok(log.entries().some((e) => e.event === "job.lease_lost"));
    } finally {
      beat.stop();
    }
  });

  test("a renewal that never answers stops the run once the lease has run out", async () => {
    const { beat, lost } = heartbeat(() => new Promise<boolean>(() => {}));
    try {
      await delay(LEASE_MS * 3);
      assert.equal(lost.length, 1);
      assert.ok(lost[0]!.afterMs >= LEASE_MS);
    } finally {
      beat.stop();
    }
  });

  test("a store that answers the lease is gone (cancelled, taken over) stops the run at the next renewal", async () => {
    const { beat, lost } = heartbeat(async () => false);
    try {
      await delay(LEASE_MS * 0.6);
      assert.equal(lost.length, 1);
      assert.equal(lost[0]!.reason, "the job was cancelled or taken over");
      assert.ok(lost[0]!.afterMs < LEASE_MS, "at once, without waiting for the lease to run out");
    } finally {
      beat.stop();
    }
  });
});
