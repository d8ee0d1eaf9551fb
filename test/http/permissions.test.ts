/** The checks handlers make once they know the model or trainer, and charging usage. */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "vitest";
import {
  chargeUsage,
  requireAgreement,
  requireFineTuningEnabled,
  requireModelAllowed,
  requirePaymentMethod,
} from "../../server/http/auth.ts";
import { ApiError } from "../../server/api-error.ts";
import { issueApiKey } from "../../server/store/api-keys.ts";
import { openTestStore } from "../../harness/test-store.ts";
import { ACCOUNT_DEFAULTS } from "../../server/store/store.ts";
import type { Account } from "../../server/store/store.ts";

function account(fields: Partial<Account> = {}): Account {
  return { ...ACCOUNT_DEFAULTS, id: "acme", createdAt: new Date(0), ...fields };
}

function throwsCode(fn: () => void, code: string, status: number): void {
  assert.throws(fn, (error: unknown) => error instanceof ApiError && error.code === code && error.status === status);
}

describe("requireModelAllowed", () => {
  it("passes every model when the account has no allow-list", () => {
    requireModelAllowed(account(), "tiny-reasoner");
  });

  it("is 403 MODEL_NOT_ALLOWED for a model off the list", () => {
    const restricted = account({ allowedModels: ["tiny-chat"] });
    requireModelAllowed(restricted, "tiny-chat");
    throwsCode(() => requireModelAllowed(restricted, "tiny-reasoner"), "MODEL_NOT_ALLOWED", 403);
  });

  it("names the field that named the model", () => {
    assert.throws(
      () => requireModelAllowed(account({ allowedModels: [] }), "tiny-chat", "baseModel"),
      (error: unknown) => error instanceof ApiError && error.param === "baseModel",
    );
  });
});

describe("requirePaymentMethod", () => {
  it("is 402 PAYMENT_REQUIRED for a paid model without a payment method", () => {
    throwsCode(
      () => requirePaymentMethod(account(), { id: "tiny-chat", pricePerMillionTokens: "0.10" }),
      "PAYMENT_REQUIRED",
      402,
    );
  });

  it("passes a free model without a payment method, and a paid one with it", () => {
    requirePaymentMethod(account(), { id: "free", pricePerMillionTokens: "0" });
    requirePaymentMethod(account(), { id: "free", pricePerMillionTokens: "0.00" });
    requirePaymentMethod(account({ hasPaymentMethod: true }), { id: "tiny-chat", pricePerMillionTokens: "0.10" });
  });
});

describe("requireAgreement", () => {
  it("passes when nothing is required", () => {
    requireAgreement(account(), "");
  });

  it("is 403 AGREEMENT_REQUIRED unless that version was accepted", () => {
    throwsCode(() => requireAgreement(account(), "2026-01"), "AGREEMENT_REQUIRED", 403);
    throwsCode(
      () => requireAgreement(account({ acceptedAgreementVersion: "2025-06" }), "2026-01"),
      "AGREEMENT_REQUIRED",
      403,
    );
    requireAgreement(account({ acceptedAgreementVersion: "2026-01" }), "2026-01");
  });
});

describe("requireFineTuningEnabled", () => {
  it("is 403 OPERATION_NOT_ALLOWED when disabled", () => {
    throwsCode(() => requireFineTuningEnabled(account({ fineTuningEnabled: false })), "OPERATION_NOT_ALLOWED", 403);
    requireFineTuningEnabled(account());
  });
});

describe("chargeUsage", () => {
  it("takes the cost from the balance and counts it toward the budget", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "charge-test-"));
    const store = await openTestStore(dir);
    try {
      const acme = await store.accounts.create({ id: "acme", balanceMicros: 1_000_000 });
      const { key } = await issueApiKey(store, "acme");
      const startOfTest = new Date(Date.now() - 1000);
      const after = await chargeUsage(
        store,
        { account: acme, keyId: key.id },
        { amountMicros: 250_000, kind: "inference" },
      );
      assert.deepEqual(after, { balanceMicros: 750_000 });
      assert.equal((await store.accounts.get("acme"))?.balanceMicros, 750_000);
      assert.equal(await store.usage.spentSince("acme", startOfTest), 250_000);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
