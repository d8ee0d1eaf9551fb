/**
 * The PostgreSQL connection pool every PostgreSQL sub-store shares, with what they all
 * need: a transaction helper that retries serialization failures, and the translation of
 * a database that does not answer into the StoreError `unavailable` (503 STORAGE_UNAVAILABLE at the HTTP edge).
 *
 * Nothing may hang on the database: connecting, waiting for a pooled connection, and every
 * statement have a time limit, and each limit that runs out is a 503 with Retry-After.
 * A server process then answers fast while PostgreSQL is down and recovers by itself when
 * it is back (the pool opens new connections; broken ones are discarded).
 */
import pg from "pg";
import { defaultOf } from "../../settings/parse.ts";
import { StoreError } from "../errors.ts";

/** What a query runs on: the pool (one statement, autocommit) or a client inside a transaction. */
export type Db = Pick<pg.Pool | pg.PoolClient, "query">;
export type Row = Record<string, unknown>;

export interface PostgresSettings {
  /** Connections per process (default 10). Several processes × this must stay under `max_connections`. */
  poolSize: number;
  /** The longest to wait for a connection, new or pooled (default 5 s). */
  connectTimeoutMs: number;
  /** The longest one statement may run on the server (default 15 s); also bounds lock waits. */
  statementTimeoutMs: number;
}

export const POSTGRES_DEFAULTS: PostgresSettings = {
  poolSize: defaultOf("PG_POOL_SIZE"),
  connectTimeoutMs: defaultOf("PG_CONNECT_TIMEOUT_MS"),
  statementTimeoutMs: defaultOf("PG_STATEMENT_TIMEOUT_MS"),
};

/** Seconds a client is told to wait (Retry-After) when the database does not answer. */
const RETRY_AFTER_SECONDS = 1;
/** Attempts of a transaction that PostgreSQL aborted to keep it serializable (or a deadlock). */
const TRANSACTION_ATTEMPTS = 5;

// int8 (COUNT, BIGINT columns) and numeric (SUM) arrive as strings by default; every such
// value here is a millisecond time, a micro-unit amount or a count, all safe integers.
const INT8_OID = 20;
const NUMERIC_OID = 1700;
const TYPES = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === INT8_OID || oid === NUMERIC_OID
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format as "text")) as typeof pg.types.getTypeParser,
};

export function createPool(connectionString: string, settings: PostgresSettings = POSTGRES_DEFAULTS): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max: settings.poolSize,
    connectionTimeoutMillis: settings.connectTimeoutMs,
    idleTimeoutMillis: 30_000,
    // Server-side limits, sent when each connection starts: a statement (or a lock wait) that
    // runs too long is cancelled, and a transaction left open by a stuck process is ended.
    statement_timeout: settings.statementTimeoutMs,
    idle_in_transaction_session_timeout: settings.statementTimeoutMs * 2,
    // Client-side limit for when the server cannot even say so (network gone, host frozen).
    query_timeout: settings.statementTimeoutMs + settings.connectTimeoutMs,
    keepAlive: true,
    application_name: "inference-finetune-server",
    types: TYPES,
  });
  // An idle pooled connection that breaks (the database restarted) emits here; without a
  // listener that would end the process. The pool has already dropped it.
  pool.on("error", (error) => console.error(`PostgreSQL connection lost: ${error.message}`));
  return pool;
}

/** One statement, its rows. */
export async function query(db: Db, text: string, values: unknown[] = []): Promise<Row[]> {
  return (await db.query(text, values)).rows as Row[];
}

export async function queryOne(db: Db, text: string, values: unknown[] = []): Promise<Row | undefined> {
  return (await query(db, text, values))[0];
}

/**
 * Runs `work` in one transaction on one pooled connection. PostgreSQL may abort a
 * transaction to keep it serializable, or to break a deadlock: such a transaction changed
 * nothing, so it is run again (a few times, after a short random pause).
 */
export async function inTransaction<T>(
  pool: pg.Pool,
  work: (db: pg.PoolClient) => Promise<T>,
  options: { serializable?: boolean } = {},
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const { client, release } = await checkOut(pool);
    let broken: Error | undefined;
    try {
      await client.query(options.serializable ? "BEGIN ISOLATION LEVEL SERIALIZABLE" : "BEGIN");
      const result = await work(client);
      await client.query("COMMIT");
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch((rollbackError: Error) => {
        broken = rollbackError; // the connection is unusable: the pool discards it
      });
      if (attempt < TRANSACTION_ATTEMPTS && isRetryable(error)) {
        await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20 * attempt));
        continue;
      }
      throw error;
    } finally {
      release(broken);
    }
  }
}

/**
 * A pooled connection for several statements, and its release. While a connection is checked
 * out the pool does not listen for its errors: one that breaks between statements (the
 * database restarted) emits "error" with no statement to fail, and an "error" nobody listens
 * to ends the process. Until release this listener keeps it, so that the connection is
 * discarded rather than pooled again.
 */
export async function checkOut(pool: pg.Pool): Promise<{ client: pg.PoolClient; release(error?: Error): void }> {
  const client = await pool.connect();
  let lost: Error | undefined;
  const onError = (error: Error) => (lost = error);
  client.on("error", onError);
  return {
    client,
    release(error) {
      client.off("error", onError);
      client.release(error ?? lost);
    },
  };
}

/**
 * Runs a store operation and turns a database that does not answer into the StoreError
 * `unavailable` (503 STORAGE_UNAVAILABLE with Retry-After at the HTTP edge). StoreErrors
 * pass unchanged (they were meant); anything else is a bug and ends as 500 INTERNAL.
 *
 * A COMMIT cut off by a lost connection may or may not have happened; the client is told
 * 503 and retries, which is why job creation takes an Idempotency-Key.
 */
export async function pgCall<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof StoreError) throw error;
    if (isUnstorableText(error))
      throw new StoreError(
        "invalid-text",
        "A value holds the NUL character (U+0000), which no id or stored text can hold; remove it.",
        { cause: error },
      );
    if (isUnavailable(error)) {
      throw new StoreError("unavailable", "The database is not answering. Retry shortly.", {
        retryAfterSeconds: RETRY_AFTER_SECONDS,
        cause: error,
      });
    }
    throw error;
  }
}

interface PgError extends Error {
  code?: string;
  errors?: unknown[];
}

/**
 * PostgreSQL refuses U+0000 in text (22021, character_not_in_repertoire) and in jsonb
 * (22P05, untranslatable_character), whether the value is to be stored or only compared;
 * SQLite takes it. The HTTP edge refuses `%00` in paths and queries and the NUL in the one
 * free-text field (a dataset's displayName), so this is the backstop for any other value
 * that reaches a statement.
 */
function isUnstorableText(error: unknown): boolean {
  const code = (error as PgError | null)?.code;
  return code === "22021" || code === "22P05";
}

/** SQLSTATE classes and codes that say "the database cannot serve this now", not "this is wrong". */
const UNAVAILABLE_CLASSES = ["08", "53", "57", "58"]; // connection exception, insufficient resources, operator intervention (shutdown, timeouts), system error
const UNAVAILABLE_CODES = ["40001", "40P01", "55P03", "25P03"]; // serialization failure, deadlock (past the retries), lock timeout, idle-in-transaction timeout
const NETWORK_CODES = [
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  "ECONNABORTED",
];
/** node-postgres's own messages for a connection that broke or never came. */
const UNAVAILABLE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Connection ended|not queryable/i;

export function isUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { code, errors } = error as PgError;
  if (typeof code === "string") {
    if (code.length === 5 && (UNAVAILABLE_CLASSES.includes(code.slice(0, 2)) || UNAVAILABLE_CODES.includes(code)))
      return true;
    if (NETWORK_CODES.includes(code)) return true;
  }
  // Connecting to a name with several addresses fails with all their errors at once.
  if (Array.isArray(errors) && errors.some(isUnavailable)) return true;
  return UNAVAILABLE_MESSAGES.test(error.message);
}

function isRetryable(error: unknown): boolean {
  const code = (error as PgError | undefined)?.code;
  return code === "40001" || code === "40P01";
}

/** Whether the error is a unique (or primary key) violation: a duplicate id. */
export function isDuplicate(error: unknown): boolean {
  return (error as PgError | undefined)?.code === "23505";
}

/** Whether the error is a foreign key violation: a reference to a missing row. */
export function isMissingReference(error: unknown): boolean {
  return (error as PgError | undefined)?.code === "23503";
}
