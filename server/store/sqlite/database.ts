/**
 * The SQLite connection every SQLite sub-store shares, with the two things they all need:
 * a transaction helper and the translation of SQLite failures into StoreErrors.
 *
 * node:sqlite is synchronous. Each store method runs its statements (and its transaction)
 * without awaiting in between, so no other request's statements can interleave with an
 * open transaction on this one connection.
 */
import { DatabaseSync } from "node:sqlite";
import { StoreError } from "../errors.ts";

/** How long a writer waits for another process's write lock before giving up. */
const BUSY_TIMEOUT_MS = 5000;

// SQLite primary result codes (the low byte of an extended code), https://sqlite.org/rescode.html
const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;
const SQLITE_CONSTRAINT = 19;
const SQLITE_CONSTRAINT_PRIMARYKEY = 1555;
const SQLITE_CONSTRAINT_UNIQUE = 2067;

export function openDatabase(file: string): DatabaseSync {
  const db = new DatabaseSync(file, { timeout: BUSY_TIMEOUT_MS });
  // WAL lets readers go on while one process writes; NORMAL sync is durable in WAL mode
  // except for the last commits on power loss, the usual trade for a server.
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.exec("PRAGMA foreign_keys = ON");
  return db;
}

/**
 * Runs `work` in one write transaction. BEGIN IMMEDIATE takes the write lock up front, so
 * a read-then-write inside cannot be overtaken by another process between the two.
 */
export function inTransaction<T>(db: DatabaseSync, work: () => T): T {
  db.exec("BEGIN IMMEDIATE");
  try {
    const result = work();
    db.exec("COMMIT");
    return result;
  } catch (error) {
    if (db.isTransaction) db.exec("ROLLBACK");
    throw error;
  }
}

interface SqliteError extends Error {
  code: string;
  errcode: number;
}

function isSqliteError(error: unknown): error is SqliteError {
  return error instanceof Error && (error as Partial<SqliteError>).code === "ERR_SQLITE_ERROR";
}

/** Whether the error is a primary-key or unique violation (a duplicate id). */
export function isDuplicate(error: unknown): boolean {
  if (!isSqliteError(error)) return false;
  return error.errcode === SQLITE_CONSTRAINT_PRIMARYKEY || error.errcode === SQLITE_CONSTRAINT_UNIQUE;
}

/** Whether the error is any constraint violation (e.g. a foreign key to a missing row). */
export function isConstraint(error: unknown): boolean {
  return isSqliteError(error) && (error.errcode & 0xff) === SQLITE_CONSTRAINT;
}

/**
 * Runs a store operation and turns a database that does not answer (locked past the busy
 * timeout) into the StoreError `unavailable` (503 STORAGE_UNAVAILABLE at the HTTP edge).
 * Other errors pass through unchanged: a StoreError was meant, anything else is a bug and
 * ends as 500 INTERNAL.
 */
export async function storeCall<T>(work: () => T): Promise<T> {
  try {
    return work();
  } catch (error) {
    if (isSqliteError(error) && [SQLITE_BUSY, SQLITE_LOCKED].includes(error.errcode & 0xff)) {
      throw new StoreError("unavailable", "The database is busy. Retry shortly.", {
        retryAfterSeconds: 1,
        cause: error,
      });
    }
    throw error;
  }
}
