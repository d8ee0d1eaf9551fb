/**
 * Every environment variable the server (`npm start`), the training worker (`npm run
 * worker`) and the admin commands (`npm run admin`, `npm run migrate`) read: one row each,
 * with its kind, the processes that read it, its default, and what it means. The README's
 * Configuration table is printed from these rows (`npm run settings:readme`; a test fails
 * when the two differ), and settings/parse.ts reads them once at start-up. A new setting is
 * one row here.
 *
 * The only variables not here are the credentials whose names the routing file and the
 * catalogue choose (`apiKeyEnv`): settings/environment.ts reads those.
 */
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { AT_LEAST_ONE, DIRECTORY, FLAG, type Kind, MILLISECONDS, oneOf, PORT, POSTGRES_URL, TEXT } from "./kinds.ts";

/** The processes that read settings; `admin` is `npm run admin` and `npm run migrate`. */
export type Reader = "server" | "worker" | "admin";

/** What a default may depend on. */
export interface Context {
  /** NODE_ENV is `production`. */
  production: boolean;
}

export interface Setting<T, R extends Reader = Reader> {
  kind: Kind<T>;
  readBy: readonly R[];
  /** The value when the variable is unset or empty. */
  fallback: (context: Context) => T;
  /** The default as the README shows it. */
  shown: string;
  /** What the variable does (Markdown, as in the README). */
  meaning: string;
}

interface Row<R extends Reader> {
  readBy: readonly R[];
  shown: string;
  meaning: string;
}

/** A row with a default; without one, the setting is `undefined` when the variable is unset. */
function row<T, R extends Reader>(
  kind: Kind<T>,
  spec: Row<R> & { default: NoInfer<T> | ((c: Context) => NoInfer<T>) },
): Setting<T, R>;
function row<T, R extends Reader>(kind: Kind<T>, spec: Row<R>): Setting<T | undefined, R>;
function row<T, R extends Reader>(
  kind: Kind<T>,
  spec: Row<R> & { default?: T | ((c: Context) => T) },
): Setting<T | undefined, R> {
  const given = spec.default;
  const fallback = typeof given === "function" ? (given as (c: Context) => T) : () => given;
  return { kind, readBy: spec.readBy, fallback, shown: spec.shown, meaning: spec.meaning };
}

export const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;
export type LogLevelSetting = (typeof LOG_LEVELS)[number];

const file = (name: string) => fileURLToPath(new URL(`../${name}`, import.meta.url));
const ALL = ["server", "worker", "admin"] as const;
const PROCESSES = ["server", "worker"] as const;
const unlessProduction = ({ production }: Context) => !production;

export const SETTINGS = {
  PORT: row(PORT, {
    readBy: ["server"],
    default: 8080,
    shown: "`8080`",
    meaning: "port to listen on; `0` picks a free one (the printed URL says which)",
  }),
  HOST: row(TEXT, {
    readBy: PROCESSES,
    default: "127.0.0.1",
    shown: "`127.0.0.1`",
    meaning: "address to listen on (a worker's metrics listener's too, unless `METRICS_HOST`)",
  }),
  DATA_DIR: row(DIRECTORY, {
    readBy: ALL,
    default: () => path.resolve("data"),
    shown: "`./data`",
    meaning:
      "the SQLite database (`service.db`, WAL mode) and the files: dataset versions, checkpoints, adapters; with PostgreSQL, one directory that every server and worker mounts ([Scaling out](#scaling-out))",
  }),
  DATABASE_URL: row(POSTGRES_URL, {
    readBy: ALL,
    shown: "unset (SQLite in `DATA_DIR`)",
    meaning:
      "`postgres://user:password@host:port/database`: the PostgreSQL that all processes share (accounts, keys, usage, rate windows, idempotency records, datasets, jobs, the job queue, models)",
  }),
  PG_POOL_SIZE: row(AT_LEAST_ONE, {
    readBy: ALL,
    default: 10,
    shown: "`10`",
    meaning: "PostgreSQL connections per process (processes × this must stay below `max_connections`)",
  }),
  PG_CONNECT_TIMEOUT_MS: row(AT_LEAST_ONE, {
    readBy: ALL,
    default: 5_000,
    shown: "`5000`",
    meaning: "longest wait for a PostgreSQL connection; then 503",
  }),
  PG_STATEMENT_TIMEOUT_MS: row(AT_LEAST_ONE, {
    readBy: ALL,
    default: 15_000,
    shown: "`15000`",
    meaning: "longest a PostgreSQL statement (or lock wait) may take; then 503",
  }),
  MIGRATE_ON_START: row(FLAG, {
    readBy: ALL,
    default: true,
    shown: "`1`",
    meaning:
      "`0`: processes don't migrate the store and refuse a schema that is behind (`npm run migrate` is the deploy step)",
  }),
  NODE_ENV: row(TEXT, {
    readBy: ["server"],
    shown: "",
    meaning: "`production`: responses are not validated against the contract, and the development seed is not loaded",
  }),
  VALIDATE_RESPONSES: row(FLAG, {
    readBy: ["server"],
    default: unlessProduction,
    shown: "`1` unless production",
    meaning: "`1` checks every response against the contract (a mismatch is a logged 500), `0` does not",
  }),
  DEV_SEED: row(FLAG, {
    readBy: ["server"],
    default: unlessProduction,
    shown: "`1` unless production",
    meaning:
      "`1` loads `server/dev-seed.json` into an empty store and offers the fault models of `server/dev/fault-models.ts`, `0` does not; `NODE_ENV=production DEV_SEED=1` refuses to start",
  }),
  ROUTING_FILE: row(TEXT, {
    readBy: ["server", "admin"],
    default: file("routing.json"),
    shown: "`server/routing.json`",
    meaning: "the routing file (below)",
  }),
  CATALOG_FILE: row(TEXT, {
    readBy: ALL,
    default: file("catalog.json"),
    shown: "`server/catalog.json`",
    meaning:
      "the model catalogue (JSON, or YAML when named `.yaml`): every platform model, its limits, prices and training offer, checked against `server/catalog.schema.json` at start-up ([Run it in front of your providers](#run-it-in-front-of-your-providers)); a worker reads which trainer each base model uses",
  }),
  MAX_BODY_BYTES: row(AT_LEAST_ONE, {
    readBy: ["server"],
    default: 8 * 1024 ** 2,
    shown: "8 MiB",
    meaning: "the largest JSON request body; larger is 413 `MEDIA_TOO_LARGE`",
  }),
  MAX_UPLOAD_BYTES: row(AT_LEAST_ONE, {
    readBy: ["server"],
    default: 4 * 1024 ** 3,
    shown: "4 GiB",
    meaning: "the largest dataset upload; larger is 413 `MEDIA_TOO_LARGE`",
  }),
  RUN_JOBS: row(FLAG, {
    readBy: ["server"],
    default: true,
    shown: "`1`",
    meaning: "`0`: this process serves the API but trains no jobs (servers, when workers do the training)",
  }),
  JOB_LEASE_MS: row(AT_LEAST_ONE, {
    readBy: PROCESSES,
    default: 30_000,
    shown: "`30000`",
    meaning:
      "how long a job (and a process's dataset work) stays claimed by a process that stopped renewing it (died) before another resumes it",
  }),
  JOB_POLL_MS: row(AT_LEAST_ONE, {
    readBy: ["worker"],
    default: 1_000,
    shown: "`1000`",
    meaning: "how often an idle worker looks for a queued job",
  }),
  OWNER_HOST: row(TEXT, {
    readBy: PROCESSES,
    default: () => os.hostname() || "localhost",
    shown: "host name",
    meaning: "names this machine in dataset-work owners; must differ between machines",
  }),
  LOG_LEVEL: row(oneOf(LOG_LEVELS), {
    readBy: PROCESSES,
    default: "info",
    shown: "`info`",
    meaning: "`debug`, `info`, `warn`, `error` or `silent`; `info` writes one line per request (Operating, below)",
  }),
  METRICS_PORT: row(PORT, {
    readBy: PROCESSES,
    shown: "unset",
    meaning:
      "serve Prometheus metrics at `GET /metrics` on this port (`0`: any free port, printed); unset: no metrics are kept",
  }),
  METRICS_HOST: row(TEXT, {
    readBy: PROCESSES,
    shown: "`HOST`",
    meaning: "the metrics listener's address (`0.0.0.0` to let a scraper on another machine reach it)",
  }),
  SHUTDOWN_GRACE_MS: row(MILLISECONDS, {
    readBy: PROCESSES,
    default: 25_000,
    shown: "`25000`",
    meaning:
      "on SIGTERM, how long requests, streams and a training job get to finish before streams are ended with an error event and the job stops at its last checkpoint; its lease is released either way (Kubernetes sends SIGKILL 30 s after SIGTERM by default)",
  }),
};
