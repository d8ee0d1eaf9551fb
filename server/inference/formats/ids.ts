/** Ids of answers and their items: a prefix and 24 random hex characters, as the OpenAI format has them. */
import { randomHex } from "../../http/random-hex.ts";

export function newId(prefix: string): string {
  return `${prefix}_${randomHex(12)}`;
}

export function unixSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
