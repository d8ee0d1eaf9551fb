/**
 * Waiting for a benchmark's child process (a server, a baseline, an upstream) to say where
 * it listens: the first capture of `pattern` in what it prints on stdout. Rejects with its
 * output if it ends before printing it.
 */
import type { ChildProcess } from "node:child_process";

export function printedByChild(child: ChildProcess, pattern: RegExp, what: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let output = "";
    child.stdout!.on("data", (data: Buffer) => {
      output += String(data);
      const found = pattern.exec(output)?.[1];
      if (found) resolve(found);
    });
    // "close", not "exit": by then stdout has been read to its end, so a child that prints
    // its line and exits at once is not taken for one that never printed it.
    child.once("close", (code) => reject(new Error(`${what} exited (${code}): ${output}`)));
  });
}
