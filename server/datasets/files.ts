/**
 * Version files on disk: written from a stream chunk by chunk (never held whole), synced
 * to disk before anyone is told they exist, and removed when an upload is not kept.
 */
import { mkdir, open, rm } from "node:fs/promises";
import path from "node:path";
import { ApiError } from "../api-error.ts";

/**
 * Writes `source` to `file` (replacing a leftover of an upload that never finished) and
 * returns its size. More than `maxBytes` is 413 MEDIA_TOO_LARGE. The data, and the
 * directory entries that lead to it, are fsynced before it returns: a caller may then
 * acknowledge the file, and a crash cannot take it back.
 */
export async function writeFileDurably(source: AsyncIterable<Buffer>, file: string, maxBytes: number): Promise<number> {
  await mkdir(path.dirname(file), { recursive: true });
  const handle = await open(file, "w");
  let bytes = 0;
  try {
    for await (const chunk of source) {
      bytes += chunk.length;
      if (bytes > maxBytes) throw tooLarge(maxBytes);
      for (let offset = 0; offset < chunk.length;) {
        offset += (await handle.write(chunk, offset, chunk.length - offset)).bytesWritten;
      }
    }
    await handle.sync();
  } finally {
    await handle.close();
  }
  await syncDirectories(file);
  return bytes;
}

export function tooLarge(maxBytes: number): ApiError {
  return new ApiError(
    "MEDIA_TOO_LARGE",
    `The upload is larger than the limit of ${maxBytes} bytes; split the rows over several datasets.`,
  );
}

/** Removes a file that is not kept; a missing file is fine. */
export async function removeFile(file: string): Promise<void> {
  await rm(file, { force: true });
}

/**
 * A new file is only durable once the directory that names it is synced, and so on up
 * for directories created with it: `<account>/<dataset>/` under the datasets directory.
 */
async function syncDirectories(file: string): Promise<void> {
  let dir = path.dirname(file);
  for (let level = 0; level < 3; level++) {
    const handle = await open(dir, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    dir = path.dirname(dir);
  }
}

/** Storage that fails (disk full, permissions) is 503 STORAGE_UNAVAILABLE; other errors pass. */
export function storageError(error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (
    typeof code === "string" &&
    ["ENOSPC", "EDQUOT", "EIO", "EACCES", "EPERM", "EROFS", "EMFILE", "ENFILE"].includes(code)
  ) {
    return new ApiError("STORAGE_UNAVAILABLE", "Dataset storage is not available right now. Retry shortly.", {
      retryAfter: 1,
      cause: error,
    });
  }
  return error;
}
