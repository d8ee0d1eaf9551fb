/**
 * The Node versions the packages declare, and the kit's own check at start: one minimum,
 * written in common/node-version.ts and in every package's `engines`, no lower than what
 * their dependencies declare. (The packed kit refusing the machine's Node 20 with one line
 * is in package.slow.test.ts.)
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { test } from "vitest";
import { MINIMUM_NODE, nodeTooOld } from "../../common/node-version.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const manifest = (file: string) => JSON.parse(readFileSync(path.join(ROOT, file), "utf8"));

test("the kit's check and the packages' engines name the same minimum", () => {
  const [major, minor] = MINIMUM_NODE.split(".");
  for (const pkg of ["conformance", "client", "cli", "tools/contract-diff"])
    assert.equal(manifest(`${pkg}/package.json`).engines.node, `>=${major}.${minor}`, pkg);
});

test("no package declares a Node older than its dependencies do", () => {
  for (const pkg of ["conformance", "client", "cli", "tools/contract-diff"]) {
    for (const dep of Object.keys(manifest(`${pkg}/package.json`).dependencies)) {
      const declared = /^>=\s*([\d.]+)$/.exec(manifest(`node_modules/${dep}/package.json`).engines?.node ?? "")?.[1];
      if (declared)
        assert.equal(nodeTooOld(MINIMUM_NODE, declared), false, `${pkg} → ${dep} needs Node >= ${declared}`);
    }
  }
});

test("versions older than the minimum are too old, the minimum and newer are not", () => {
  assert.equal(nodeTooOld("20.20.2", "22.12.0"), true);
  assert.equal(nodeTooOld("22.11.9", "22.12.0"), true);
  assert.equal(nodeTooOld("22.12.0", "22.12.0"), false);
  assert.equal(nodeTooOld("v22.13.1", "22.12.0"), false);
  assert.equal(nodeTooOld("24.0.0", "22.12.0"), false);
  assert.equal(nodeTooOld("23.0.0", "22.12.0"), false);
});
