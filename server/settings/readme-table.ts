/**
 * The README's Configuration table, printed from the settings table: one row per variable.
 * `npm run settings:readme` writes it into README.md; test/settings/readme-table.test.ts
 * fails when the README's table and this one differ.
 */
import { type Reader, type Setting, SETTINGS } from "./table.ts";

export const TABLE_HEADER = "| variable | read by | default | meaning |\n| --- | --- | --- | --- |";

/** The README's name for each reader. */
const READER_NAMES: Record<Reader, string> = { server: "server", worker: "worker", admin: "admin" };

export function settingRow(name: string, setting: Setting<unknown>): string {
  const readers = setting.readBy.map((reader) => READER_NAMES[reader]).join(", ");
  const cells = [`\`${name}\``, readers, setting.shown, setting.meaning];
  return `|${cells.map((cell) => (cell === "" ? " " : ` ${cell} `)).join("|")}|`;
}

export function settingsTable(): string {
  const rows = Object.entries(SETTINGS).map(([name, setting]) => settingRow(name, setting as Setting<unknown>));
  return [TABLE_HEADER, ...rows].join("\n");
}

/** The first table of the README's Configuration section: its start and end offsets. */
export function configurationTableSpan(readme: string): { start: number; end: number } {
  const section = readme.indexOf("\n## Configuration\n");
  if (section < 0) throw new Error("README.md has no Configuration section");
  const start = readme.indexOf("\n|", section) + 1;
  const next = readme.indexOf("\n## ", section + 1);
  if (start === 0 || (next >= 0 && start > next)) throw new Error("README.md's Configuration section has no table");
  let end = start;
  while (readme.startsWith("|", end)) end = readme.indexOf("\n", end) + 1;
  return { start, end: end - 1 };
}

/** The README with its Configuration table replaced by the settings table. */
export function withSettingsTable(readme: string): string {
  const { start, end } = configurationTableSpan(readme);
  return readme.slice(0, start) + settingsTable() + readme.slice(end);
}
