/**
 * The bounded pass of `npm test` (stateful.test.ts) on each store, about a minute each on 2
 * shared cores; scripts/fuzz-stateful.ts runs ten times as many runs by default.
 */
export const STATEFUL_CI = { seed: 20261125, runs: 2, clients: 2, maxCommands: 8, shrinkMs: 60_000 };
