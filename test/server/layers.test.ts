/**
 * Layers import downward only (issue 17): read every server file's imports with the
 * TypeScript compiler's own pre-processor and refuse the edges that point the wrong way.
 *
 * - The store knows nothing of HTTP: it throws its own errors (server/store/errors.ts), and
 *   the HTTP edge maps them (server/http/store-errors.ts).
 * - The two store implementations share modules (server/store/shared/) instead of one
 *   importing the other.
 * - Fine-tuning uses datasets (row formats, file validation, training data); datasets never
 *   import fine-tuning.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");

interface ImportEdge {
  /** Both paths relative to the repository, with `/` separators. */
  from: string;
  to: string;
}

interface LayerRule {
  name: string;
  /** Folders (relative to the repository) whose files may not import… */
  importer: string;
  /** …anything under this folder. */
  forbidden: string;
}

const RULES: readonly LayerRule[] = [
  { name: "the store does not import the HTTP layer", importer: "server/store/", forbidden: "server/http/" },
  {
    name: "the PostgreSQL store does not import the SQLite one",
    importer: "server/store/postgres/",
    forbidden: "server/store/sqlite/",
  },
  {
    name: "the SQLite store does not import the PostgreSQL one",
    importer: "server/store/sqlite/",
    forbidden: "server/store/postgres/",
  },
  { name: "datasets do not import fine-tuning", importer: "server/datasets/", forbidden: "server/finetune/" },
];

/** The relative imports of one file's text (static, type-only, re-exports and `import()`), resolved against its path. */
function importsOf(file: string, text: string): ImportEdge[] {
  const { importedFiles } = ts.preProcessFile(text, true, true);
  return importedFiles
    .map((imported) => imported.fileName)
    .filter((specifier) => specifier.startsWith("."))
    .map((specifier) => ({
      from: file,
      to: path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier)),
    }));
}

function typeScriptFilesUnder(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".ts"))
    .map((name) => path.posix.join(dir, name.split(path.sep).join("/")));
}

function violations(edges: readonly ImportEdge[], rule: LayerRule): string[] {
  return edges
    .filter((edge) => edge.from.startsWith(rule.importer) && edge.to.startsWith(rule.forbidden))
    .map((edge) => `${edge.from} imports ${edge.to}`);
}

const serverEdges = typeScriptFilesUnder("server").flatMap((file) =>
  importsOf(file, readFileSync(path.join(ROOT, file), "utf8")),
);

describe("layers import downward only", () => {
  for (const rule of RULES) {
    it(rule.name, () => {
      assert.deepEqual(violations(serverEdges, rule), []);
    });
  }

  it("the scan sees the server's imports, the edge's mapping of store errors among them", () => {
    assert.ok(serverEdges.length > 300, `only ${serverEdges.length} imports found`);
    assert.ok(
      serverEdges.some((e) => e.from === "server/http/store-errors.ts" && e.to === "server/store/errors.ts"),
      "server/http/store-errors.ts → server/store/errors.ts not seen",
    );
  });

  it("an upward import of any form is caught: multi-line, type-only, re-export, dynamic", () => {
    const text = [
      'import {\n  ApiError,\n  statusFor,\n} from "../../http/store-errors.ts";',
      'import type { Request } from "../../http/locals.ts";',
      'export { OperationHandlers } from "../../http/operation-routes.ts";',
      'const later = await import("../../http/auth.ts");',
      'import { StoreError } from "../errors.ts";',
    ].join("\n");
    const edges = importsOf("server/store/sqlite/example.ts", text);
    assert.deepEqual(violations(edges, RULES[0]!), [
      "server/store/sqlite/example.ts imports server/http/store-errors.ts",
      "server/store/sqlite/example.ts imports server/http/locals.ts",
      "server/store/sqlite/example.ts imports server/http/operation-routes.ts",
      "server/store/sqlite/example.ts imports server/http/auth.ts",
    ]);
  });
});
