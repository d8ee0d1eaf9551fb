/** Ids of answers and their items: a prefix and 24 random hex characters, as the OpenAI format has them. */
import { randomBytes } from "node:crypto";

export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString("hex")}`;
}

export function unixSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
