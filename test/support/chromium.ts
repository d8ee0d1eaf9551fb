/**
 * Chromium for the tests that drive a browser (Debian's `chromium`, through playwright-core):
 * where it is, why a test is skipped without it, and a headless launch with the CLI's flags,
 * which keep it off the network this machine does not have.
 */
import { existsSync } from "node:fs";
import type { Browser } from "playwright-core";
import { CHROMIUM_FLAGS, chromiumPath } from "../../cli/browser.ts";

/** CHROMIUM_PATH, or Debian's `/usr/bin/chromium`. */
export const CHROMIUM = chromiumPath();

/** Why the browser tests are skipped here (there is no browser), or false. */
export const NO_CHROMIUM =
  !existsSync(CHROMIUM) &&
  `no browser at ${CHROMIUM} (scripts/install-system-packages.sh installs it; REQUIRE_CHROMIUM=1 makes this a failure)`;

/** With REQUIRE_CHROMIUM=1, a missing browser fails the test file instead of skipping its tests. */
export function requireChromiumWhenAsked(): void {
  if (NO_CHROMIUM && process.env.REQUIRE_CHROMIUM === "1")
    throw new Error(`REQUIRE_CHROMIUM=1 but there is no browser at ${CHROMIUM}`);
}

/** Headless Chromium; playwright gives it a fresh temporary profile. */
export async function launchBrowser(): Promise<Browser> {
  const { chromium } = await import("playwright-core");
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
}
