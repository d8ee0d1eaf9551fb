/**
 * Headless Chromium (Debian's `chromium`, driven by playwright-core, which downloads no
 * browser of its own): renders a chart's SVG to PNG. The flags keep it off the network.
 */
import { existsSync } from "node:fs";
import type { Browser } from "playwright-core";
import { CliError, EXIT } from "./errors.ts";

export const CHROMIUM_FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

export function chromiumPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.CHROMIUM_PATH ?? "/usr/bin/chromium";
}

export async function launchChromium(env: NodeJS.ProcessEnv = process.env): Promise<Browser> {
  const executablePath = chromiumPath(env);
  if (!existsSync(executablePath)) {
    throw new CliError(`PNG output needs Chromium, and there is none at ${executablePath}`, EXIT.ERROR, [
      "install it (scripts/install-system-packages.sh, or apt-get install chromium), set CHROMIUM_PATH, or write .svg instead",
    ]);
  }
  const { chromium } = await import("playwright-core");
  return chromium.launch({ executablePath, args: CHROMIUM_FLAGS });
}

/** The SVG drawn by Chromium as a PNG, at twice its size for sharp text. */
export async function svgToPng(svg: string, env: NodeJS.ProcessEnv = process.env): Promise<Buffer> {
  const browser = await launchChromium(env);
  try {
    const page = await browser.newPage({ deviceScaleFactor: 2 });
    await page.setContent(`<!doctype html><html><body style="margin:0;background:#fff">${svg}</body></html>`);
    const element = await page.$("svg");
    if (!element) throw new Error("the chart has no <svg> element");
    return await element.screenshot({ type: "png" });
  } finally {
    await browser.close();
  }
}
