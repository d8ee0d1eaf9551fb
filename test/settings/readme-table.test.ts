/**
 * The README's Configuration table is the settings table (server/settings/table.ts) printed:
 * a variable in one and not the other, or a default or meaning that differ, fails here,
 * naming the variable. `npm run settings:readme` rewrites the README's table. And no file
 * of the server reads the environment outside server/settings/, so a new variable cannot
 * bypass the table.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "vitest";
import {
  configurationTableSpan,
  settingRow,
  settingsTable,
  TABLE_HEADER,
  withSettingsTable,
} from "../../server/settings/readme-table.ts";
import { type Setting, SETTINGS } from "../../server/settings/table.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const README = readFileSync(path.join(ROOT, "README.md"), "utf8");

/** The README table's rows by variable name. */
function readmeRows(readme: string): Map<string, string> {
  const { start, end } = configurationTableSpan(readme);
  const lines = readme.slice(start, end).split("\n");
  assert.equal(lines.slice(0, 2).join("\n"), TABLE_HEADER, "the Configuration table's header");
  return new Map(lines.slice(2).map((line) => [/^\| `([A-Z0-9_]+)`/.exec(line)?.[1] ?? line, line]));
}

describe("the README's Configuration table", () => {
  const rows = readmeRows(README);

  it("names every variable of the settings table, and only those", () => {
    const names = Object.keys(SETTINGS);
    assert.deepEqual(
      names.filter((name) => !rows.has(name)),
      [],
      "in settings/table.ts, not in the README (npm run settings:readme)",
    );
    assert.deepEqual(
      [...rows.keys()].filter((name) => !names.includes(name)),
      [],
      "in the README, not in settings/table.ts",
    );
  });

  for (const [name, setting] of Object.entries(SETTINGS))
    it(`${name}: the same readers, default and meaning`, () => {
      assert.equal(rows.get(name), settingRow(name, setting as Setting<unknown>), "npm run settings:readme");
    });

  it("is the printed table, in the table's order", () => {
    assert.equal(withSettingsTable(README), README);
    assert.ok(README.includes(settingsTable()));
  });

  it("a changed default in the README is caught", () => {
    const changed = README.replace(
      "| `JOB_LEASE_MS` | server, worker | `30000` |",
      "| `JOB_LEASE_MS` | server, worker | `60000` |",
    );
    assert.notEqual(changed, README);
    assert.notEqual(readmeRows(changed).get("JOB_LEASE_MS"), settingRow("JOB_LEASE_MS", SETTINGS.JOB_LEASE_MS));
  });
});

it("only server/settings/ reads process.env", () => {
  const files = readdirSync(path.join(ROOT, "server"), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".ts"))
    .map((name) => path.join("server", name));
  const readers = files.filter(
    (file) =>
      !file.startsWith(path.join("server", "settings") + path.sep) &&
      /process\.env\b/.test(readFileSync(path.join(ROOT, file), "utf8")),
  );
  assert.deepEqual(readers, [], "read settings through server/settings/ (a row of table.ts)");
});
