/**
 * The generated OpenAPI is the reference users read, so everything in it is described:
 * every named schema, every property, every parameter and every operation.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "vitest";
import { parse } from "yaml";

type Node = Record<string, any>;

const doc: Node = parse(readFileSync(new URL("../../generated/openapi.3.1.yaml", import.meta.url), "utf8"));

/** Properties without a description, below `schema`, named by their path. */
function undescribedProperties(where: string, schema: Node | undefined): string[] {
  if (schema === undefined || typeof schema !== "object") return [];
  const own = Object.entries<Node>(schema.properties ?? {}).flatMap(([name, property]) => [
    ...(property.description === undefined && property.$ref === undefined ? [`${where}.${name}`] : []),
    ...undescribedProperties(`${where}.${name}`, property),
  ]);
  const nested = ["items", "anyOf", "oneOf", "allOf"].flatMap((key) => {
    const value = schema[key];
    if (Array.isArray(value)) return value.flatMap((s: Node) => undescribedProperties(where, s));
    return undescribedProperties(where, value);
  });
  return [...own, ...nested];
}

const schemas = Object.entries<Node>(doc.components?.schemas ?? {});
const operations = Object.entries<Node>(doc.paths ?? {}).flatMap(([path, item]) =>
  Object.entries<Node>(item).map(([method, op]) => ({ label: `${method.toUpperCase()} ${path}`, op })),
);

test("every named schema has a description", () => {
  assert.deepEqual(
    schemas.filter(([, s]) => s.description === undefined).map(([name]) => name),
    [],
  );
});

test("every property of every named schema has a description", () => {
  assert.deepEqual(
    schemas.flatMap(([name, s]) => undescribedProperties(name, s)),
    [],
  );
});

test("every operation and every parameter has a description", () => {
  const parameters = Object.entries<Node>(doc.components?.parameters ?? {});
  const missing = [
    ...operations.filter(({ op }) => op.description === undefined).map(({ label }) => label),
    ...operations.flatMap(({ label, op }) =>
      (op.parameters ?? [])
        .filter((p: Node) => p.$ref === undefined && p.description === undefined)
        .map((p: Node) => `${label} parameter ${p.name}`),
    ),
    ...parameters.filter(([, p]) => p.description === undefined).map(([name]) => `parameter ${name}`),
  ];
  assert.deepEqual(missing, []);
});
