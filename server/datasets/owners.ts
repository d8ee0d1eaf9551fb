/**
 * Who is doing a piece of dataset work (receiving an upload, validating a version), so
 * that work whose process died can be told from work still under way in another live
 * process sharing the store.
 *
 * An owner is `<host>:<pid>:<random>`. The random part tells this process's owners apart
 * from those of an earlier process that had the same pid (a restarted container's pid 1).
 * Whether an owner still runs:
 * - on this host (the only case with SQLite, which one host shares): its process id says
 *   so at once, as it always did;
 * - on another host (several machines on one PostgreSQL): a pid means nothing here, so
 *   each process records a heartbeat for its owners in the store (`keepOwnersAlive`), and
 *   an owner whose heartbeat ran out is dead. Its work waits at most one TTL.
 * The host is the OWNER_HOST setting (the host name by default; `useOwnerHost`): it must
 * differ between machines.
 * Owners written before hosts were recorded (`<pid>:<random>`) are treated as this host's.
 */
import { randomUUID } from "node:crypto";
import { defaultOf } from "../settings/parse.ts";
import type { Store } from "../store/store.ts";

/** This machine, as owners name it (no `:`, which separates the parts). */
let ownerHost = asOwnerHost(defaultOf("OWNER_HOST"));

function asOwnerHost(host: string): string {
  return host.replaceAll(":", "_");
}

/** Names this machine by the OWNER_HOST setting; the entry points call it before any work is owned. */
export function useOwnerHost(host: string): void {
  ownerHost = asOwnerHost(host);
}

/** How long an owner counts as alive after its last heartbeat, unless told otherwise (JOB_LEASE_MS). */
export const DEFAULT_OWNER_TTL_MS = defaultOf("JOB_LEASE_MS");

/** The owners alive in this process. */
const live = new Set<string>();

/** A new owner, alive until `release`. */
export function newOwner(): string {
  const owner = `${ownerHost}:${process.pid}:${randomUUID()}`;
  live.add(owner);
  return owner;
}

export function release(owner: string): void {
  live.delete(owner);
}

/** Owner of the work done outside a running service (derived datasets); alive with the process. */
export const PROCESS_OWNER = newOwner();

/** Whether the work's owner still runs; work without an owner has none to wait for. */
export async function ownerAlive(store: Store, owner: string | null, now = new Date()): Promise<boolean> {
  if (owner === null) return false;
  if (live.has(owner)) return true;
  const parts = owner.split(":");
  const [host, pidText] = parts.length >= 3 ? parts : [ownerHost, parts[0]];
  if (host === ownerHost) return pidAlive(Number(pidText));
  return store.owners.alive(owner, now);
}

function pidAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0); // signal 0: only asks whether the process exists
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Records a heartbeat for every owner alive in this process now and then every third of
 * `ttlMs`, so that processes on other hosts see them alive. The first beat is written
 * before this resolves: no other host can find a fresh owner without a heartbeat. A beat
 * that fails (the database is down) is retried at the next interval; an outage longer than
 * the TTL lets other hosts take over this process's dataset work, which is why an upload
 * is only acknowledged while its version is still this owner's (store.completeUpload).
 */
export async function keepOwnersAlive(store: Store, ttlMs = DEFAULT_OWNER_TTL_MS): Promise<{ close(): Promise<void> }> {
  const beat = () => store.owners.heartbeat([...live], new Date(Date.now() + ttlMs));
  await beat();
  const timer = setInterval(
    () => {
      beat().catch((error: Error) => console.error(`Dataset owner heartbeat failed: ${error.message}`));
    },
    Math.max(50, ttlMs / 3),
  );
  timer.unref();
  return {
    async close() {
      clearInterval(timer);
    },
  };
}

/** Forgets a released owner in the store too, so other hosts may take its work over at once. */
export async function forget(store: Store, owner: string): Promise<void> {
  release(owner);
  await store.owners.forget(owner).catch(() => undefined); // it runs out by itself otherwise
}
