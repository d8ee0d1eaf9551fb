/**
 * Where the files of a document are read from: the file system, or a git revision (so a
 * multi-file document is read as a whole at its own revision, `main:api/openapi.yaml`).
 * Paths are resolved relative to the file that refers to them, never to the cwd.
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { dirname, posix, resolve } from "node:path";
import { promisify } from "node:util";
import { DocumentError } from "./errors.ts";

const run = promisify(execFile);

export interface FileSource {
  /** The file's text; throws DocumentError when it cannot be read. */
  read(path: string): Promise<string>;
  /** `target` as written in a `$ref` inside `from`, as a path this source reads. */
  resolve(from: string, target: string): string;
  /** How a path is named in messages. */
  label(path: string): string;
}

/** A `$ref`'s file part is a URI reference: `my%20schemas/pet.yaml` names `my schemas/pet.yaml`. */
function decodeTarget(target: string): string {
  try {
    return decodeURIComponent(target);
  } catch (error) {
    throw new DocumentError(`$ref ${target}: not a valid URI reference`, { cause: error });
  }
}

export function fileSystemSource(): FileSource {
  return {
    async read(path) {
      return readFile(path, "utf8").catch((error: NodeJS.ErrnoException) => {
        throw new DocumentError(`cannot read ${path}: ${error.code === "ENOENT" ? "no such file" : error.message}`, {
          cause: error,
        });
      });
    },
    resolve: (from, target) => resolve(dirname(from), decodeTarget(target)),
    label: (path) => path,
  };
}

/** Files of `revision` in the repository at `repo`; paths are relative to its root. */
export function gitSource(repo: string, revision: string): FileSource {
  return {
    async read(path) {
      try {
        const { stdout } = await run("git", ["cat-file", "blob", `${revision}:${path}`], {
          cwd: repo,
          maxBuffer: 64 * 1024 * 1024,
          encoding: "utf8",
        });
        return stdout;
      } catch (error) {
        throw new DocumentError(`cannot read ${revision}:${path}: no such file at that revision`, { cause: error });
      }
    },
    resolve(from, target) {
      const joined = posix.normalize(posix.join(posix.dirname(from), decodeTarget(target)));
      if (joined.startsWith("../"))
        throw new DocumentError(`${revision}:${from}: $ref ${target} leaves the repository`);
      return joined;
    },
    label: (path) => `${revision}:${path}`,
  };
}

/** Whether git knows `revision` in `repo` (so `rev:path` names a file there). */
export async function isGitRevision(repo: string, revision: string): Promise<boolean> {
  try {
    await run("git", ["rev-parse", "--verify", "--quiet", `${revision}^{commit}`], { cwd: repo });
    return true;
  } catch {
    return false;
  }
}
