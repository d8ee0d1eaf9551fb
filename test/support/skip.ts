/**
 * vitest's `skip` option takes a boolean; node:test's took the reason. Say the reason once,
 * where the run's output shows it, and hand vitest the boolean.
 */
export function skipping(reason: string | boolean | undefined): boolean {
  if (typeof reason === "string" && reason.length > 0) console.warn(`skipped: ${reason}`);
  return Boolean(reason);
}
