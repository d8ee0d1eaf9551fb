#!/usr/bin/env node
/**
 * The command-line tool of the inference and fine-tuning service: `npm run cli -- <command>`
 * (or `itk <command>` once linked). See docs/cli.md, or `--help` on any command.
 *
 * Ctrl-C stops what can be stopped cleanly (a watch, a streamed answer) and exits 130; a
 * second Ctrl-C exits at once.
 */
import { stopQuietlyOnClosedPipe } from "./closed-pipe.ts";
import { processIo } from "./context.ts";
import { EXIT } from "./errors.ts";
import { run } from "./program.ts";

stopQuietlyOnClosedPipe([process.stdout, process.stderr], (code) => process.exit(code));

const controller = new AbortController();
process.on("SIGINT", () => {
  if (controller.signal.aborted) process.exit(EXIT.INTERRUPTED);
  controller.abort(new DOMException("Interrupted", "AbortError"));
  // Whatever does not listen to the signal (an upload) ends here.
  setTimeout(() => process.exit(EXIT.INTERRUPTED), 1500).unref();
});

const code = await run(process.argv.slice(2), processIo(), controller.signal);
// Let pending writes (a piped stdout) drain; exitCode does not cut them short.
process.exitCode = code;
