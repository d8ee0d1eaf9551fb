/**
 * A profile file is checked against its typed schema (conformance/profile-schema.ts), not
 * by hand: a wrong value is a ProfileError naming the file and the field, in the words the
 * kit used before the schema (other companies read them); `$…` keys stay comments and a
 * null role stays absent.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, test } from "vitest";
import { loadProfile, parseProfile, ProfileError } from "../../conformance/profile.ts";

const dir = mkdtempSync(path.join(os.tmpdir(), "profile-file-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const minimal = {
  baseUrl: "http://127.0.0.1:9/v1",
  accounts: { primary: { id: "a", key: "k1" }, secondary: { id: "b", key: "k2" } },
  models: { chat: "m" },
};

function profileFile(name: string, profile: unknown): string {
  const file = path.join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(profile));
  return file;
}

function rejects(read: () => unknown, message: string): void {
  assert.throws(read, (error: unknown) => {
    assert.ok(error instanceof ProfileError, String(error));
    assert.equal(error.message, message);
    return true;
  });
}

describe("a profile file", () => {
  test("a wrong value names the file and the field", () => {
    const file = profileFile("bad-key", {
      ...minimal,
      accounts: { ...minimal.accounts, suspended: { id: "s", key: 42 } },
    });
    rejects(() => loadProfile(file), `profile ${file}: accounts.suspended.key must be a non-empty string`);
    const timeout = profileFile("bad-timeout", { ...minimal, timeouts: { jobMs: 0 } });
    rejects(() => loadProfile(timeout), `profile ${timeout}: timeouts.jobMs must be a positive number of milliseconds`);
  });

  test("the kit's words for each kind of problem are kept", () => {
    const cases: [unknown, string][] = [
      [{ ...minimal, accounts: undefined }, "accounts must be an object of roles"],
      [{ ...minimal, accounts: { secondary: minimal.accounts.secondary } }, "accounts.primary is required"],
      [{ ...minimal, accounts: { ...minimal.accounts, restricted: "r" } }, "accounts.restricted must be {id, key}"],
      [{ ...minimal, models: { tools: "t" } }, "models.chat is required"],
      [{ ...minimal, capabilities: { mediaInput: "yes" } }, "capabilities.mediaInput must be true or false"],
      [{ ...minimal, faults: { cutStream: "m" } }, "faults.cutStream must be {model, input?, headers?, term?}"],
      [
        { ...minimal, faults: { cutStream: { model: "m", headers: [] } } },
        "faults.cutStream.headers must be an object",
      ],
      [{ ...minimal, concurrency: 1.5 }, "concurrency must be a whole number of at least 1"],
      [{ ...minimal, baseUrl: 5 }, "baseUrl must be a non-empty string"],
      [
        { ...minimal, settings: { mediaMaxByte: 5 } },
        "unknown profile key settings.mediaMaxByte (did you mean mediaMaxBytes?)",
      ],
    ];
    for (const [raw, message] of cases) rejects(() => parseProfile(raw), message);
  });

  test("comments and null roles are left out; the rest is read as before", () => {
    const profile = parseProfile({
      ...minimal,
      $comment: "a profile",
      accounts: { ...minimal.accounts, suspended: null, $note: 1 },
      models: { chat: "m", tools: null },
      faults: { cutStream: { model: "m", headers: { "x-fault": 1 } } },
      timeouts: { pollMs: 5 },
    });
    assert.deepEqual(Object.keys(profile.accounts), ["primary", "secondary"]);
    assert.deepEqual(profile.models, { chat: "m" });
    assert.deepEqual(profile.faults, { cutStream: { model: "m", input: "Hi", headers: { "x-fault": "1" } } });
    assert.equal(profile.timeouts.pollMs, 5);
    assert.equal(profile.timeouts.jobMs, 120_000);
    assert.equal(profile.concurrency, 4);
    assert.equal(profile.origin, "http://127.0.0.1:9");
  });
});
