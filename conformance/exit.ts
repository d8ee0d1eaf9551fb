/**
 * Exit codes of a conformance run, the same for the kit's own command (`conformance`,
 * `npx @inference-toolkit/conformance`) and the toolkit CLI's `conformance run`, whose
 * codes they are (cli/errors.ts): a script branches on them the same way from either.
 */
export const EXIT = {
  /** Every transcript that ran passed (skipped and not implemented ones do not fail a run). */
  OK: 0,
  /** The kit itself broke (a bug, a file it cannot write). */
  ERROR: 1,
  /** A bad profile, selection or argument: nothing was run. */
  USAGE: 2,
  /** The run finished and some transcript failed. */
  FAILED: 8,
  /** Interrupted with Ctrl-C; what the run had made was cleaned up. */
  INTERRUPTED: 130,
} as const;
