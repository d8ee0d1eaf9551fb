/** The small comparisons the schema rules are built on: what an edit does to the accepted values. */
import assert from "node:assert/strict";
import { test } from "vitest";
import { classify } from "../../tools/contract-diff/rules/directional.ts";
import { compareBound, compareLimit, showBound } from "../../tools/contract-diff/rules/schema/bounds.ts";
import { compareFormats } from "../../tools/contract-diff/rules/schema/format.ts";
import { compareMultipleOf } from "../../tools/contract-diff/rules/schema/multiple-of.ts";
import { comparePatterns } from "../../tools/contract-diff/rules/schema/pattern.ts";
import { compareTypes, typesDisjoint } from "../../tools/contract-diff/rules/schema/type.ts";
import type { JsonType } from "../../tools/contract-diff/schema.ts";

const types = (...t: JsonType[]) => new Set(t);

test("classify: narrowing requests and widening responses break clients", () => {
  assert.deepEqual(classify("request", "narrowed"), { level: "ERR", breaks: "clients" });
  assert.deepEqual(classify("request", "widened"), { level: "WARN", breaks: "implementations" });
  assert.deepEqual(classify("response", "widened"), { level: "ERR", breaks: "clients" });
  assert.deepEqual(classify("response", "narrowed"), { level: "WARN", breaks: "implementations" });
  assert.deepEqual(classify("response", "changed"), { level: "ERR", breaks: "both" });
});

test("types: an integer is a number; no type accepts anything", () => {
  assert.equal(compareTypes(types("integer"), types("number")), "widened");
  assert.equal(compareTypes(types("number"), types("integer")), "narrowed");
  assert.equal(compareTypes(types("string"), types("integer")), "changed");
  assert.equal(compareTypes(undefined, types("string")), "narrowed");
  assert.equal(compareTypes(types("string"), types("string", "array")), "widened");
  assert.equal(compareTypes(types("string"), types("string")), undefined);
  assert.equal(typesDisjoint(types("string"), types("integer")), true);
  assert.equal(typesDisjoint(types("integer"), types("number")), false);
});

test("formats: within a family a larger one accepts the smaller", () => {
  assert.equal(compareFormats("int32", "int64"), "widened");
  assert.equal(compareFormats("double", "float"), "narrowed");
  assert.equal(compareFormats(undefined, "date-time"), "narrowed");
  assert.equal(compareFormats("date-time", undefined), "widened");
  assert.equal(compareFormats("date-time", "uri"), "changed");
});

test("limits: lowered or set narrows an upper limit; raised or set narrows a lower one", () => {
  assert.equal(compareLimit(64, 32, "upper"), "narrowed");
  assert.equal(compareLimit(undefined, 32, "upper"), "narrowed");
  assert.equal(compareLimit(64, undefined, "upper"), "widened");
  assert.equal(compareLimit(1, 2, "lower"), "narrowed");
  assert.equal(compareLimit(1, undefined, "lower"), "widened");
  assert.equal(compareLimit(5, 5, "lower"), undefined);
});

test("bounds: an exclusive bound is tighter than an inclusive one of the same value", () => {
  assert.equal(compareBound({ value: 10, exclusive: false }, { value: 10, exclusive: true }, "upper"), "narrowed");
  assert.equal(compareBound({ value: 0, exclusive: true }, { value: 0, exclusive: false }, "lower"), "widened");
  assert.equal(compareBound({ value: 10, exclusive: false }, { value: 20, exclusive: false }, "upper"), "widened");
  assert.equal(showBound({ value: 10, exclusive: true }, "upper"), "< 10");
  assert.equal(showBound(undefined, "lower"), "none");
});

test("multipleOf and pattern", () => {
  assert.equal(compareMultipleOf(0.5, 1), "narrowed");
  assert.equal(compareMultipleOf(1, 0.5), "widened");
  assert.equal(compareMultipleOf(0.5, 0.3), "changed");
  assert.equal(comparePatterns(undefined, "^a$")?.effect, "narrowed");
  assert.equal(comparePatterns("^a$", "^b$")?.effect, "changed");
});

test("patterns: accepting every string is no pattern; dropped anchors and added alternatives generalize", () => {
  assert.equal(comparePatterns("^[a-z]+$", ".*")?.effect, "widened");
  assert.equal(comparePatterns("^[a-z]+$", ".*")?.generalized, true);
  assert.equal(comparePatterns(".*", undefined), undefined);
  assert.deepEqual(comparePatterns("^[a-z]+$", "[a-z]+"), { effect: "widened", generalized: true });
  assert.deepEqual(comparePatterns("^[a-z]+$", "^[a-z]+$|^[0-9]+$"), { effect: "widened", generalized: true });
  assert.deepEqual(comparePatterns("[a-z]+", "^[a-z]+$"), { effect: "narrowed", generalized: true });
  assert.deepEqual(comparePatterns("^[a-z]+$", "^[a-y]+$"), { effect: "changed", generalized: false });
});
