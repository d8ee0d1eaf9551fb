/**
 * `npm run settings:readme`: writes the README's Configuration table from the settings
 * table (server/settings/table.ts), after a row there was added or changed.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { withSettingsTable } from "../server/settings/readme-table.ts";

const README = fileURLToPath(new URL("../README.md", import.meta.url));
const before = readFileSync(README, "utf8");
const after = withSettingsTable(before);
writeFileSync(README, after);
console.log(
  before === after ? "README.md's Configuration table was up to date." : "README.md's Configuration table rewritten.",
);
