/**
 * Who is doing a piece of dataset work (receiving an upload, validating a version), so
 * that work whose process died can be told from work still under way in another live
 * server process on the same DATA_DIR (SQLite in WAL mode is shared on one host only,
 * so a process id says whether its owner still runs).
 *
 * An owner is `<pid>:<random>`: the random part tells this process's owners apart from
 * those of an earlier process that had the same pid (a restarted container's pid 1).
 */
import { randomUUID } from "node:crypto";

/** The owners alive in this process. */
const live = new Set<string>();

/** A new owner, alive until `release`. */
export function newOwner(): string {
  const owner = `${process.pid}:${randomUUID()}`;
  live.add(owner);
  return owner;
}

export function release(owner: string): void {
  live.delete(owner);
}

/** Owner of the work done outside a running service (derived datasets); alive with the process. */
export const PROCESS_OWNER = newOwner();

/** Whether the work's owner still runs; work without an owner has none to wait for. */
export function ownerAlive(owner: string | null): boolean {
  if (owner === null) return false;
  if (live.has(owner)) return true;
  const pid = Number(owner.split(":")[0]);
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0); // signal 0: only asks whether the process exists
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
