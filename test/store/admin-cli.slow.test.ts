/** The admin command, run as a process on a temp DATA_DIR, as an operator runs it. */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, it } from "vitest";
import { COMMANDS } from "../../server/admin/commands.ts";
import { hashApiKeySecret } from "../../server/store/api-keys.ts";
import { openTestStore, storeEnvFor } from "../../harness/test-store.ts";

const CLI = fileURLToPath(new URL("../../server/admin/cli.ts", import.meta.url));

let dataDir: string;
let storeEnv: Record<string, string>;

beforeEach(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), "admin-test-"));
  storeEnv = await storeEnvFor(dataDir);
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

function admin(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    env: { ...process.env, ...storeEnv },
    encoding: "utf8",
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function ok(...args: string[]): string {
  const result = admin(...args);
  assert.equal(result.status, 0, `${args.join(" ")}: ${result.stderr}`);
  return result.stdout;
}

/** Reads what the commands wrote, through the store the server uses. */
async function account(id: string) {
  const store = await openTestStore(dataDir);
  try {
    return await store.accounts.get(id);
  } finally {
    await store.close();
  }
}

describe("admin accounts", () => {
  it("creates an account with a balance and lists it", async () => {
    assert.match(ok("accounts", "create", "acme", "--balance", "100.00"), /Created account acme/);
    assert.equal((await account("acme"))?.balanceMicros, 100_000_000);
    assert.match(ok("accounts", "list"), /^acme .*balance 100\.00/m);
  });

  it("suspends and unsuspends", async () => {
    ok("accounts", "create", "acme");
    ok("accounts", "suspend", "acme");
    assert.equal((await account("acme"))?.suspended, true);
    ok("accounts", "unsuspend", "acme");
    assert.equal((await account("acme"))?.suspended, false);
  });

  it("sets the balance, limits, allowed models and agreements", async () => {
    ok("accounts", "create", "acme");
    ok("balance", "set", "acme", "12.345");
    ok("limits", "set", "acme", "--rpm", "30", "--budget", "5.00");
    ok("models", "allow", "acme", "tiny-chat", "tiny-reasoner");
    ok("agreements", "accept", "acme", "2026-01");
    ok("payment-method", "set", "acme", "on");
    ok("fine-tuning", "disable", "acme");
    const acme = await account("acme");
    assert.equal(acme?.balanceMicros, 12_345_000);
    assert.equal(acme?.requestsPerMinute, 30);
    assert.equal(acme?.budgetMicros, 5_000_000);
    assert.deepEqual(acme?.allowedModels, ["tiny-chat", "tiny-reasoner"]);
    assert.equal(acme?.acceptedAgreementVersion, "2026-01");
    assert.equal(acme?.hasPaymentMethod, true);
    assert.equal(acme?.fineTuningEnabled, false);

    ok("models", "allow-all", "acme");
    ok("limits", "set", "acme", "--rpm", "none", "--budget", "none");
    const cleared = await account("acme");
    assert.equal(cleared?.allowedModels, null);
    assert.equal(cleared?.requestsPerMinute, null);
    assert.equal(cleared?.budgetMicros, null);
  });
});

describe("admin keys", () => {
  it("creates a key, printing it once; lists and revokes it", async () => {
    ok("accounts", "create", "acme");
    const created = ok("keys", "create", "--account", "acme");
    const secret = /^(sk-acme-\S+)$/m.exec(created)?.[1];
    const keyId = /(key_[0-9a-f]+)/.exec(created)?.[1];
    assert.ok(secret && keyId, created);

    const listed = ok("keys", "list", "--account", "acme");
    assert.match(listed, new RegExp(`^${keyId} .*active`, "m"));
    assert.ok(!listed.includes(secret), "keys list shows the secret");

    const store = await openTestStore(dataDir);
    try {
      assert.equal((await store.apiKeys.findBySecretHash(hashApiKeySecret(secret)))?.id, keyId);
    } finally {
      await store.close();
    }
    assert.match(ok("keys", "revoke", keyId), /revoked/);
  });
});

describe("admin mistakes", () => {
  const usageFailures: [string, string[], RegExp][] = [
    ["no command", [], /No command given/],
    ["an unknown command", ["accounts", "frobnicate"], /Unknown command "accounts frobnicate"/],
    ["a bad amount", ["balance", "set", "acme", "lots"], /not an amount/],
    ["a bad account id", ["accounts", "create", "Not An Id"], /not an account id/],
    ["an unknown option", ["accounts", "create", "acme", "--colour", "red"], /Unknown option/],
    ["a missing argument", ["accounts", "suspend"], /Expected 1 argument/],
    ["keys create without --account", ["keys", "create"], /--account <id> is required/],
    ["limits set without a limit", ["limits", "set", "acme"], /Give --rpm, --budget or both/],
    ["a bad rpm", ["limits", "set", "acme", "--rpm", "0"], /--rpm/],
    ["models allow without a model", ["models", "allow", "acme"], /at least one model/],
  ];
  for (const [name, args, message] of usageFailures) {
    it(`${name} exits 2 with a message and the usage`, () => {
      const result = admin(...args);
      assert.equal(result.status, 2);
      assert.match(result.stderr, message);
      assert.match(result.stderr, /npm run admin --/);
    });
  }

  it("what the store refuses exits 1 with its message", () => {
    ok("accounts", "create", "acme");
    const duplicate = admin("accounts", "create", "acme");
    assert.equal(duplicate.status, 1);
    assert.match(duplicate.stderr, /already exists/);
    const missing = admin("accounts", "suspend", "nobody");
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /No account nobody/);
  });

  it("help exits 0 with the usage", () => {
    const result = admin("help");
    assert.equal(result.status, 0);
    assert.match(result.stdout, /keys create --account <id>/);
  });

  it("--help after a group (limits --help) exits 0 with that group's commands only", () => {
    const groups = new Set(Object.keys(COMMANDS).map((name) => name.split(" ")[0] as string));
    const asks = [...[...groups].map((group) => [group, "--help"]), ["limits", "-h"], ["help", "limits"]];
    for (const asked of asks) {
      const result = admin(...asked);
      assert.equal(result.status, 0, `${asked.join(" ")}: ${result.stderr}`);
      const listed = [...result.stdout.matchAll(/npm run admin -- (\S+ \S+)/g)].map((m) => m[1]);
      const group = asked[0] === "help" ? asked[1] : asked[0];
      assert.deepEqual(
        listed,
        Object.keys(COMMANDS).filter((name) => name.startsWith(`${group} `)),
        asked.join(" "),
      );
    }
  });

  it("--help after a command exits 0 with its usage", () => {
    for (const name of ["limits set", "keys create"]) {
      const result = admin(...name.split(" "), "--help");
      assert.equal(result.status, 0, `${name} --help: ${result.stderr}`);
      assert.equal(result.stdout.trim(), `Usage: npm run admin -- ${COMMANDS[name]?.usage}`);
    }
  });

  it("--help after an unknown group is still an unknown command", () => {
    const result = admin("frobnicate", "--help");
    assert.equal(result.status, 2);
    assert.match(result.stderr, /Unknown command "frobnicate --help"/);
  });
});
