/**
 * The oldest Node the packages run on (the kit, the client, the CLI, the contract diff), as
 * the `engines` of their package.json say (a test checks all agree). 22.12 because the
 * kit's dependencies declare it (eventsource-parser 4, and commander 15 for the toolkit's
 * CLI): npm warns on every install below it, and refuses with engine-strict. Node 20 (end
 * of life since April 2026) is refused at start with one line by the kit's and the
 * contract diff's commands, instead of whatever an older runtime makes of them.
 *
 * Pure (no imports): each package whose command checks it ships it as `common/`.
 */
export const MINIMUM_NODE = "22.12.0";

/** Whether `version` (the running Node's, such as `20.20.2` or `v22.13.1`) is older than `minimum`. */
export function nodeTooOld(version: string, minimum: string = MINIMUM_NODE): boolean {
  const parts = (v: string) =>
    v
      .replace(/^v/, "")
      .split(".")
      .map((n) => Number.parseInt(n, 10) || 0);
  const [have, need] = [parts(version), parts(minimum)];
  for (let i = 0; i < 3; i++) {
    const a = have[i] ?? 0;
    const b = need[i] ?? 0;
    if (a !== b) return a < b;
  }
  return false;
}
