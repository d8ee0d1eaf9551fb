/**
 * API key secrets: how they look, how they are hashed, how one is issued.
 *
 * A secret is `sk-<account>-<64 hex digits>`, 256 random bits. The account in it only helps
 * a person tell keys apart; authentication never reads it, it looks the secret's hash up.
 * Hex (not base64url, which has `-`) keeps the random part after the last `-`.
 *
 * Why SHA-256 and not a password hash (bcrypt, scrypt, argon2): those are slow on purpose
 * so that guessing a low-entropy password from its hash is costly. A 256-bit random
 * secret cannot be guessed whatever the hash speed, so slowness would only add latency to
 * every request. A deterministic fast hash also lets the store find the key by an index
 * on the hash, instead of comparing against every key. A leaked database then holds no
 * usable key.
 */
import { hash, randomBytes } from "node:crypto";
import type { ApiKey, NewApiKey, Store } from "./store.ts";

/** A fresh secret for the account. */
export function newApiKeySecret(accountId: string): string {
  return `sk-${accountId}-${randomBytes(32).toString("hex")}`;
}

/** One-shot `hash()`, not `createHash()`: no Hash object per call, a quarter of the time on every request. */
export function hashApiKeySecret(secret: string): string {
  return hash("sha256", secret, "hex");
}

export function newApiKeyId(): string {
  return `key_${randomBytes(12).toString("hex")}`;
}

/** The record to store for a secret: a new id, the hash, and a short hint (`sk-acme-…x4Qz`). */
export function apiKeyRecord(accountId: string, secret: string): NewApiKey {
  return {
    id: newApiKeyId(),
    accountId,
    secretHash: hashApiKeySecret(secret),
    hint: hintFor(secret),
  };
}

/** The part before the random characters and the last four of them: enough to tell keys apart. */
function hintFor(secret: string): string {
  const random = secret.lastIndexOf("-") + 1;
  return `${secret.slice(0, random)}…${secret.slice(Math.max(random, secret.length - 4))}`;
}

/** Creates a key for the account; the returned secret exists nowhere else, show it once. */
export async function issueApiKey(store: Store, accountId: string): Promise<{ key: ApiKey; secret: string }> {
  const secret = newApiKeySecret(accountId);
  const key = await store.apiKeys.create(apiKeyRecord(accountId, secret));
  return { key, secret };
}
