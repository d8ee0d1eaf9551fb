/**
 * The settings parser (server/settings/parse.ts): each kind's refusal, in the one line a
 * process prints before it exits; the defaults; and which process reads which variable.
 */
import assert from "node:assert/strict";
import os from "node:os";
import path from "node:path";
import { describe, it } from "vitest";
import { defaultOf, parseSettings, SettingsError } from "../../server/settings/parse.ts";
import { SETTINGS } from "../../server/settings/table.ts";

/** The message `env` is refused with by `reader`'s parse. */
function refusal(env: Record<string, string>, reader: "server" | "worker" | "admin" = "server"): string {
  try {
    parseSettings(env, reader);
  } catch (error) {
    assert.ok(error instanceof SettingsError, String(error));
    return error.message;
  }
  assert.fail(`${JSON.stringify(env)} was accepted`);
}

describe("a bad value is refused, naming the variable and what it must be", () => {
  const cases: [Record<string, string>, string][] = [
    [{ PORT: "http" }, 'PORT must be a port number from 0 to 65535, not "http"'],
    [{ PORT: "65536" }, 'PORT must be a port number from 0 to 65535, not "65536"'],
    [{ PORT: "-1" }, 'PORT must be a port number from 0 to 65535, not "-1"'],
    [{ PORT: "80.5" }, 'PORT must be a port number from 0 to 65535, not "80.5"'],
    [{ METRICS_PORT: "abc" }, 'METRICS_PORT must be a port number from 0 to 65535, not "abc"'],
    [{ MAX_UPLOAD_BYTES: "0" }, 'MAX_UPLOAD_BYTES must be a whole number of at least 1, not "0"'],
    [{ MAX_BODY_BYTES: "8MiB" }, 'MAX_BODY_BYTES must be a whole number of at least 1, not "8MiB"'],
    [{ JOB_LEASE_MS: "1e3" }, 'JOB_LEASE_MS must be a whole number of at least 1, not "1e3"'],
    [{ PG_POOL_SIZE: " 10" }, 'PG_POOL_SIZE must be a whole number of at least 1, not " 10"'],
    [{ SHUTDOWN_GRACE_MS: "-5" }, 'SHUTDOWN_GRACE_MS must be a whole number of milliseconds, 0 or more, not "-5"'],
    [{ SHUTDOWN_GRACE_MS: "25s" }, 'SHUTDOWN_GRACE_MS must be a whole number of milliseconds, 0 or more, not "25s"'],
    [{ RUN_JOBS: "false" }, 'RUN_JOBS must be 0 or 1, not "false"'],
    [{ VALIDATE_RESPONSES: "yes" }, 'VALIDATE_RESPONSES must be 0 or 1, not "yes"'],
    [{ DEV_SEED: "2" }, 'DEV_SEED must be 0 or 1, not "2"'],
    [{ MIGRATE_ON_START: "no" }, 'MIGRATE_ON_START must be 0 or 1, not "no"'],
    [{ LOG_LEVEL: "loud" }, 'LOG_LEVEL must be one of debug, info, warn, error, silent, not "loud"'],
    [{ LOG_LEVEL: "INFO" }, 'LOG_LEVEL must be one of debug, info, warn, error, silent, not "INFO"'],
  ];
  for (const [env, message] of cases)
    it(`${JSON.stringify(env)}`, () => {
      assert.equal(refusal(env), message);
    });

  it("a database URL is refused without repeating it: it may hold a password", () => {
    const message = refusal({ DATABASE_URL: "mysql://app:hunter2@db/service" });
    assert.equal(
      message,
      "DATABASE_URL must be a postgres:// or postgresql:// URL (the value is not repeated: it may hold a password)",
    );
    assert.ok(!message.includes("hunter2"));
  });

  it("every bad variable is named, in one line", () => {
    const message = refusal({ PORT: "x", LOG_LEVEL: "loud", JOB_LEASE_MS: "0" });
    assert.equal(
      message,
      'PORT must be a port number from 0 to 65535, not "x"; JOB_LEASE_MS must be a whole number of at least 1, not "0"; LOG_LEVEL must be one of debug, info, warn, error, silent, not "loud"',
    );
    assert.ok(!message.includes("\n"));
  });
});

describe("values and defaults", () => {
  it("an unset or empty variable takes its default", () => {
    for (const env of [{}, { PORT: "", HOST: "", JOB_LEASE_MS: "", LOG_LEVEL: "" }]) {
      const settings = parseSettings(env, "server");
      assert.equal(settings.PORT, 8080);
      assert.equal(settings.HOST, "127.0.0.1");
      assert.equal(settings.JOB_LEASE_MS, 30_000);
      assert.equal(settings.LOG_LEVEL, "info");
      assert.equal(settings.SHUTDOWN_GRACE_MS, 25_000);
      assert.equal(settings.MAX_BODY_BYTES, 8 * 1024 * 1024);
      assert.equal(settings.MAX_UPLOAD_BYTES, 4 * 1024 ** 3);
      assert.equal(settings.DATA_DIR, path.resolve("data"));
      assert.equal(settings.OWNER_HOST, os.hostname() || "localhost");
      assert.equal(settings.METRICS_PORT, undefined);
      assert.equal(settings.DATABASE_URL, undefined);
      assert.equal(settings.RUN_JOBS, true);
      assert.equal(settings.MIGRATE_ON_START, true);
    }
  });

  it("values are typed: numbers, flags, an absolute data directory", () => {
    const settings = parseSettings(
      { PORT: "0", METRICS_PORT: "9464", RUN_JOBS: "0", SHUTDOWN_GRACE_MS: "0", DATA_DIR: "relative/dir" },
      "server",
    );
    assert.equal(settings.PORT, 0);
    assert.equal(settings.METRICS_PORT, 9464);
    assert.equal(settings.RUN_JOBS, false);
    assert.equal(settings.SHUTDOWN_GRACE_MS, 0);
    assert.equal(settings.DATA_DIR, path.resolve("relative/dir"));
  });

  it("response validation and the development seed are on unless NODE_ENV=production, and can be set either way", () => {
    assert.deepEqual(pick(parseSettings({}, "server")), { validate: true, seed: true });
    assert.deepEqual(pick(parseSettings({ NODE_ENV: "production" }, "server")), { validate: false, seed: false });
    assert.deepEqual(pick(parseSettings({ NODE_ENV: "production", VALIDATE_RESPONSES: "1" }, "server")), {
      validate: true,
      seed: false,
    });
    assert.deepEqual(pick(parseSettings({ DEV_SEED: "0", VALIDATE_RESPONSES: "0" }, "server")), {
      validate: false,
      seed: false,
    });
  });

  it("defaultOf gives the default outside production", () => {
    assert.equal(defaultOf("PG_POOL_SIZE"), 10);
    assert.equal(defaultOf("VALIDATE_RESPONSES"), true);
    assert.match(defaultOf("CATALOG_FILE"), /server[/\\]catalog\.json$/);
  });
});

describe("each process reads its own variables", () => {
  it("the worker does not read the server's PORT, the server not the worker's JOB_POLL_MS", () => {
    const worker = parseSettings({ PORT: "not a port" }, "worker");
    assert.ok(!("PORT" in worker));
    assert.equal(worker.JOB_POLL_MS, 1_000);
    const server = parseSettings({ JOB_POLL_MS: "never" }, "server");
    assert.ok(!("JOB_POLL_MS" in server));
  });

  it("the worker's metrics listener defaults to HOST, as the server's does (METRICS_HOST unset)", () => {
    const worker = parseSettings({ HOST: "10.0.0.7" }, "worker");
    assert.equal(worker.METRICS_HOST ?? worker.HOST, "10.0.0.7");
  });

  it("the admin commands read the store's variables and the two files, nothing else", () => {
    const names = Object.entries(SETTINGS)
      .filter(([, setting]) => (setting.readBy as readonly string[]).includes("admin"))
      .map(([name]) => name);
    assert.deepEqual(Object.keys(parseSettings({}, "admin")), names);
    assert.deepEqual(names.sort(), [
      "CATALOG_FILE",
      "DATABASE_URL",
      "DATA_DIR",
      "MIGRATE_ON_START",
      "PG_CONNECT_TIMEOUT_MS",
      "PG_POOL_SIZE",
      "PG_STATEMENT_TIMEOUT_MS",
      "ROUTING_FILE",
    ]);
  });
});

function pick(settings: { VALIDATE_RESPONSES: boolean; DEV_SEED: boolean }) {
  return { validate: settings.VALIDATE_RESPONSES, seed: settings.DEV_SEED };
}
