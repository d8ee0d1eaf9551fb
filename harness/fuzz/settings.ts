/** The bounded run of test/fuzz/server.test.ts; scripts/fuzz.ts runs ten times as many by default. */
export const CI_SEED = 20261123;
export const CI_RUNS = 2000;
