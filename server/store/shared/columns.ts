/** Rows and column values as both drivers return them. */

export type Row = Record<string, unknown>;

/** A nullable integer column (INTEGER in SQLite, BIGINT in PostgreSQL) as a number. */
export function intOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}

/** A boolean column: PostgreSQL gives true/false, SQLite stores 0/1. */
export function flag(value: unknown): boolean {
  return value === true || value === 1 || value === 1n;
}
