/**
 * Around the rules: grouping and ordering of reported changes, finding the .tsp line of a
 * change, the ignore file's format, and the engine on this repository's own generated
 * contract (compared with itself, and with every model renamed).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "vitest";
import { parse } from "yaml";
import { formatRules } from "../../tools/contract-diff/cli.ts";
import { diffDocuments } from "../../tools/contract-diff/diff.ts";
import { applyIgnores, IgnoreFileError, parseIgnoreFile } from "../../tools/contract-diff/ignore.ts";
import type { Doc } from "./helpers.ts";
import { ERROR_CODE_SCHEMA } from "../../tools/contract-diff/rules/error-codes.ts";
import { locateDeclared, locateOperation } from "../../tools/contract-diff/source-map.ts";
import { edited, loadBase, renameSchema, report, requestProps, responseProps, schemas } from "./helpers.ts";

const fixture = loadBase();

test("a change in a model shared by three operations is reported once, listing them", () => {
  const [change, ...rest] = report(fixture, edited(fixture, (d) => delete responseProps(d).tags));
  assert.equal(rest.length, 0);
  assert.equal(change!.where, "Thing.tags");
  assert.deepEqual(
    change!.occurrences.map((o) => `${o.operation} | ${o.part} | ${o.path}`),
    [
      "GET /things | response 200 application/json | data[].tags",
      "GET /things/{thing} | response 200 application/json | tags",
      "POST /things | response 200 application/json | tags",
    ],
  );
});

test("breaking changes come first, ERR before WARN, then the compatible ones", () => {
  const changes = report(
    fixture,
    edited(fixture, (d) => {
      requestProps(d).color = { type: "string" }; // INFO
      delete responseProps(d).tags; // WARN
      requestProps(d).name.maxLength = 1; // ERR
    }),
  );
  assert.deepEqual(changes.map((c) => c.rule.level), ["ERR", "WARN", "INFO"]);
});

test("a change outside a named schema is located by operation, part and path", () => {
  const [change] = report(fixture, edited(fixture, (d) => (d.paths["/things"].get.parameters[0].schema.maximum = 10)));
  assert.equal(change!.where, "GET /things › parameter query limit");
  assert.equal(change!.message, "maximum ≤ 100 → ≤ 10");
});

const sources = {
  "contract/things.tsp": [
    "/** A thing. */", //                                  1
    "model Thing {", //                                    2
    "  /** The name. */", //                               3
    "  @maxLength(64)", //                                 4
    "  name?: string;", //                                 5
    "  ...Timestamps;", //                                 6
    "}", //                                                7
    "model Timestamps {", //                               8
    "  created_at: utcDateTime;", //                       9
    "}", //                                                10
    "model Detail is Envelope<string>;", //                11
    "model Envelope<T> {", //                              12
    "  error: T;", //                                      13
    "}", //                                                14
    "enum Code {", //                                      15
    "  A,", //                                             16
    "  B,", //                                             17
    "}", //                                                18
    "union Codes400 {", //                                 19
    "  Code.B,", //                                        20
    "}", //                                                21
    "@route(\"/things\")", //                              22
    "interface Things {", //                               23
    "  @get list(): Thing[];", //                          24
    "  create(@body body: Thing): Thing;", //              25
    "}", //                                                26
    "@route(\"/one\") op getOne(): Thing;", //            27
  ].join("\n"),
};

test("the .tsp line of a model, a property, a spread or inherited member, an enum or union member, an operation", () => {
  const line = (segments: string[]) => locateDeclared(sources, segments)?.line;
  assert.equal(line(["Thing"]), 2);
  assert.equal(line(["Thing", "name"]), 5);
  assert.equal(line(["Thing", "created_at"]), 9, "from a spread model");
  assert.equal(line(["Detail", "error"]), 13, "from `is Template<…>`");
  assert.equal(line(["Code", "B"]), 17);
  assert.equal(line(["Codes400", "B"]), 20);
  assert.equal(line(["Thing", "gone"]), 2, "falls back to the model");
  assert.equal(locateDeclared(sources, ["Thing", "gone"], true), undefined, "unless exact");
  assert.equal(locateOperation(sources, "Things_create")?.line, 25);
  assert.equal(locateOperation(sources, "Things_list")?.line, 24);
  assert.equal(locateOperation(sources, "getOne")?.line, 27);
});

test("the ignore file: rule, location and a reason are all required", () => {
  assert.deepEqual(parseIgnoreFile("ignore: []\n"), []);
  assert.deepEqual(parseIgnoreFile(""), []);
  assert.throws(() => parseIgnoreFile("ignore:\n  - rule: path-removed\n    reason: x\n"), IgnoreFileError);
  assert.throws(() => parseIgnoreFile("ignore:\n  - rule: path-removed\n    location: x\n    reason: '  '\n"), IgnoreFileError);
  assert.throws(() => parseIgnoreFile("ignore: nope\n"), IgnoreFileError);
  const entries = parseIgnoreFile("ignore:\n  - rule: response-optional-property-removed\n    location: Thing.*\n    reason: Nobody reads tags.\n");
  const changes = report(fixture, edited(fixture, (d) => delete responseProps(d).tags));
  assert.deepEqual(applyIgnores(changes, entries), []);
  assert.deepEqual(changes[0]!.ignored, { reason: "Nobody reads tags." });
});

// This repository's generated contract: the engine must be quiet on a pure rename.
const generated = parse(readFileSync(join(import.meta.dirname, "..", "..", "generated", "openapi.3.2.yaml"), "utf8")) as Doc;

test("this repository's contract compared with itself reports nothing", () => {
  assert.deepEqual(diffDocuments(generated, structuredClone(generated)), []);
});

test("this repository's contract with every model renamed reports nothing", () => {
  const renamed = edited(generated, (d) => {
    // ErrorCode is the published list of codes and found by name (see rules/error-codes.ts).
    for (const name of Object.keys(schemas(d)).filter((n) => n !== ERROR_CODE_SCHEMA)) renameSchema(d, name, `Renamed${name}`);
  });
  assert.notDeepEqual(Object.keys(schemas(renamed)), Object.keys(schemas(generated)));
  assert.deepEqual(diffDocuments(generated, renamed), []);
});

test("docs/contract-review.md lists the current rules (regenerate with --list-rules --format markdown)", () => {
  const doc = readFileSync(join(import.meta.dirname, "..", "..", "docs", "contract-review.md"), "utf8");
  const listed = doc.slice(doc.indexOf("<!-- rules:start -->\n") + "<!-- rules:start -->\n".length, doc.indexOf("\n<!-- rules:end -->"));
  assert.equal(`${listed}\n`, formatRules("markdown"));
});
