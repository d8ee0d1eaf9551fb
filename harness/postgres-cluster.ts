/**
 * A throwaway PostgreSQL for tests: `initdb` into a temp directory and `pg_ctl start` on a
 * free loopback port, trust authentication, durability off (fsync) for speed. Debian puts
 * the binaries in /usr/lib/postgresql/<version>/bin, outside PATH; initdb refuses to run
 * as root, so as root the cluster runs as the `postgres` user the package creates.
 *
 * The cluster is stopped and removed when the process exits, even on a failed test.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort } from "./listen.ts";

export interface PgCluster {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string;
  port: number;
  /** Stops the server (fast shutdown: connections are cut); the data stays. */
  stop(): void;
  /** Starts it again on the same port. */
  start(): void;
  /** Stops it and removes its files. */
  destroy(): void;
}

/** The directory of initdb and pg_ctl: PG_BIN, PATH, or Debian's newest /usr/lib/postgresql/<v>/bin. */
export function postgresBinDir(): string | undefined {
  const candidates: string[] = [];
  if (process.env.PG_BIN) candidates.push(process.env.PG_BIN);
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) if (dir) candidates.push(dir);
  const debian = "/usr/lib/postgresql";
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    for (const version of versions) candidates.push(path.join(debian, version, "bin"));
  }
  return candidates.find(
    (dir) =>
      existsSync(path.join(dir, "initdb")) &&
      existsSync(path.join(dir, "pg_ctl")) &&
      existsSync(path.join(dir, "postgres")),
  );
}

/** The user to run the cluster as: ourselves, or `postgres` when we are root. */
function runAs(): string | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const found = spawnSync("id", ["-u", "postgres"], { encoding: "utf8" });
  if (found.status !== 0)
    throw new Error(
      "Running as root, and there is no `postgres` user to run the test cluster as (initdb refuses root).",
    );
  return "postgres";
}

function run(user: string | undefined, command: string, args: string[]): void {
  const [file, fileArgs] = user ? ["runuser", ["-u", user, "--", command, ...args]] : [command, args];
  execFileSync(file, fileArgs, { stdio: ["ignore", "pipe", "pipe"], timeout: 60_000 });
}

const running = new Set<PgCluster>();
process.once("exit", () => {
  for (const cluster of running) cluster.destroy();
});

/** Starts a new cluster; throws when PostgreSQL is not installed. */
export async function startCluster(): Promise<PgCluster> {
  const bin = postgresBinDir();
  if (!bin)
    throw new Error(
      "PostgreSQL is not installed (no initdb/pg_ctl on PATH or in /usr/lib/postgresql/*/bin); run scripts/install-system-packages.sh",
    );
  const user = runAs();
  const dir = mkdtempSync(path.join(os.tmpdir(), "pg-test-"));
  if (user) {
    const uid = Number(execFileSync("id", ["-u", user], { encoding: "utf8" }).trim());
    const gid = Number(execFileSync("id", ["-g", user], { encoding: "utf8" }).trim());
    chownSync(dir, uid, gid);
  }
  const data = path.join(dir, "data");
  run(user, path.join(bin, "initdb"), [
    "-D",
    data,
    "-U",
    "postgres",
    "--auth=trust",
    "--no-sync",
    "-E",
    "UTF8",
    "--locale=C",
  ]);
  const port = await freePort();
  const options = [
    `-p ${port}`,
    "-c listen_addresses=127.0.0.1",
    `-k ${dir}`, // the socket next to the data, not in /var/run/postgresql
    "-c fsync=off -c synchronous_commit=off -c full_page_writes=off",
    "-c max_connections=200",
  ].join(" ");
  let destroyed = false;
  const cluster: PgCluster = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    start: () =>
      run(user, path.join(bin, "pg_ctl"), [
        "-D",
        data,
        "-l",
        path.join(dir, "log"),
        "-o",
        options,
        "-w",
        "-t",
        "60",
        "start",
      ]),
    stop: () => run(user, path.join(bin, "pg_ctl"), ["-D", data, "-m", "fast", "-w", "-t", "60", "stop"]),
    destroy() {
      if (destroyed) return;
      destroyed = true;
      running.delete(cluster);
      spawnSync(
        user ? "runuser" : path.join(bin, "pg_ctl"),
        user
          ? ["-u", user, "--", path.join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"]
          : ["-D", data, "-m", "immediate", "-w", "stop"],
        { stdio: "ignore", timeout: 30_000 },
      );
      rmSync(dir, { recursive: true, force: true });
    },
  };
  running.add(cluster);
  try {
    cluster.start();
  } catch (error) {
    cluster.destroy();
    throw error;
  }
  return cluster;
}

/**
 * For `describe(…, { skip: POSTGRES_SKIP })`: a reason to skip when PostgreSQL is neither
 * given (TEST_DATABASE_URL) nor installed, unless REQUIRE_POSTGRES=1 makes that a failure.
 */
export const POSTGRES_SKIP: string | false =
  !process.env.TEST_DATABASE_URL && postgresBinDir() === undefined && process.env.REQUIRE_POSTGRES !== "1"
    ? "PostgreSQL is not installed (scripts/install-system-packages.sh installs it; REQUIRE_POSTGRES=1 makes this a failure)"
    : false;
