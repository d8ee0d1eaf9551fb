/**
 * Random hex for ids, drawn from a pool of random bytes refilled 4 KiB at a time: one
 * `randomFillSync` per ~340 ids instead of one per id (it showed at 3.5% of the request
 * path's CPU in bench/gateway.ts profiles).
 */
import { randomFillSync } from "node:crypto";

const pool = Buffer.alloc(4096);
let offset = pool.length;

export function randomHex(bytes: number): string {
  if (offset + bytes > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const hex = pool.toString("hex", offset, offset + bytes);
  offset += bytes;
  return hex;
}
