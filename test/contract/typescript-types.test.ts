/**
 * generated/api.d.ts is what the server and the client type themselves with: it must
 * export `paths` and `components`, and `paths` must have every operation path.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "vitest";
import ts from "typescript";
import { generatedDir } from "./openapi-walk.ts";
import { ALL_OPERATIONS } from "./seed-surface.ts";

const file = join(generatedDir, "api.d.ts");
const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);

/** The exported interface or type alias of that name, or undefined. */
function exported(name: string): ts.InterfaceDeclaration | ts.TypeAliasDeclaration | undefined {
  return source.statements.find(
    (s): s is ts.InterfaceDeclaration | ts.TypeAliasDeclaration =>
      (ts.isInterfaceDeclaration(s) || ts.isTypeAliasDeclaration(s)) &&
      s.name.text === name &&
      (ts.getModifiers(s) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword),
  );
}

test("generated/api.d.ts exports paths and components", () => {
  assert.ok(exported("paths"), "api.d.ts exports `paths`");
  assert.ok(exported("components"), "api.d.ts exports `components`");
});

test("every operation path of the interface document is a key of paths", () => {
  const paths = exported("paths");
  assert.ok(paths && ts.isInterfaceDeclaration(paths), "`paths` is an interface");
  const keys = new Set(
    paths.members.flatMap((m) =>
      m.name && (ts.isStringLiteral(m.name) || ts.isIdentifier(m.name)) ? [m.name.text] : [],
    ),
  );
  const missing = [...new Set(ALL_OPERATIONS.map((o) => o.path))].filter((p) => !keys.has(p));
  assert.deepEqual(missing, []);
});
