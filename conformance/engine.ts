/**
 * The oldest Node the kit runs on, as the `engines` of its package.json say (a test checks
 * both agree). 22.12 because its dependencies declare it (eventsource-parser 4, and
 * commander 15 for the toolkit's CLI): npm warns on every install below it, and refuses
 * with engine-strict. Node 20 (end of life since April 2026) is refused at start with one
 * line, instead of whatever an older runtime makes of the kit.
 */
export const MINIMUM_NODE = "22.12.0";

/** Whether `version` (`process.versions.node`, such as `20.20.2`) is older than MINIMUM_NODE. */
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
