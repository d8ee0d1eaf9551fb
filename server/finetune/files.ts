/**
 * Files that must survive a crash once acknowledged (checkpoints, adapters): written to a
 * temporary name, flushed to disk, renamed over the target, and the directory flushed, so
 * a reader finds either the old file or the whole new one.
 */
import { randomBytes } from "node:crypto";
import { mkdir, open, rename } from "node:fs/promises";
import path from "node:path";

export async function writeFileDurably(file: string, bytes: Uint8Array): Promise<void> {
  const dir = path.dirname(file);
  await mkdir(dir, { recursive: true });
  // Unique per write: processes on several hosts share DATA_DIR, and pids repeat across hosts.
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  const handle = await open(temporary, "w");
  try {
    await handle.writeFile(bytes);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temporary, file);
  const directory = await open(dir, "r");
  try {
    await directory.sync();
  } finally {
    await directory.close();
  }
}
