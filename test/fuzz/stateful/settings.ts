/** The bounded pass of `npm test` (stateful.test.ts) on each store; scripts/fuzz-stateful.ts runs ten times as many runs by default. */
export const STATEFUL_CI = { seed: 20261125, runs: 4, clients: 3, maxCommands: 20 };
