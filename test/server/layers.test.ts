/**
 * Layers import downward only (issues 17 and 44): read every file's imports with the
 * TypeScript compiler's own pre-processor and refuse the edges that point the wrong way.
 *
 * - The store knows nothing of HTTP: it throws its own errors (server/store/errors.ts), and
 *   the HTTP edge maps them (server/http/store-errors.ts).
 * - The two store implementations share modules (server/store/shared/) instead of one
 *   importing the other.
 * - Fine-tuning uses datasets (row formats, file validation, training data); datasets never
 *   import fine-tuning.
 * - What every layer reads sits at the server's root and imports none of its folders: the
 *   error type (api-error.ts, as hono keeps HTTPException at its root), the log (log.ts) and
 *   the request context (request-context.ts).
 * - Resource names are shared (common/resource-names.ts), so the server imports nothing of
 *   the client's package.
 * - http/ ← ops/ ← inference/: ops sits above the HTTP core, not below it. Of the two
 *   directions this one left the fewest edges to move: ops/ imported three HTTP modules
 *   for real work (the cancelled-request line, the store errors' codes for the metrics'
 *   labels, the request classes the metrics listener shares with the API listener), while
 *   the HTTP core imported ops/ once, for the request context, which the log reads too and
 *   which now sits at the root. The generation record reads the engine's events, so it is
 *   inference's, and ops/ imports nothing of inference/.
 * - The embedded model's training lives beside the trainer (server/finetune/local/):
 *   inference never imports fine-tuning, and the rest of fine-tuning reaches the model
 *   through its public surface (inference/local/index.ts) and the few light modules the
 *   gradient worker threads load (no vocabulary: lora-merge.ts, math.ts, tensor-file.ts).
 * - Nothing outside test/ imports test/: what scripts, benchmarks and the fault matrix
 *   share with the tests lives in harness/ (or in the kit: conformance/fuzz/).
 * - No import cycle between the server's folders (each root file counts as its own), and
 *   no new cycle between the server's files.
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
  /** Files (or folders, ending in `/`) relative to the repository whose files may not import… */
  importers: readonly string[];
  /** …anything under these… */
  forbidden: readonly string[];
  /** …except these files or folders (an importer or a target). */
  except?: readonly string[];
}

const SERVER_FOLDERS = readdirSync(path.join(ROOT, "server"), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => `server/${entry.name}/`);

/** Every folder of code that ships or runs outside the tests. */
const OUTSIDE_TESTS = [
  "server/",
  "client/",
  "common/",
  "conformance/",
  "scripts/",
  "bench/",
  "cli/",
  "tools/",
  "harness/",
];

const RULES: readonly LayerRule[] = [
  { name: "the store does not import the HTTP layer", importers: ["server/store/"], forbidden: ["server/http/"] },
  {
    name: "the PostgreSQL store does not import the SQLite one",
    importers: ["server/store/postgres/"],
    forbidden: ["server/store/sqlite/"],
  },
  {
    name: "the SQLite store does not import the PostgreSQL one",
    importers: ["server/store/sqlite/"],
    forbidden: ["server/store/postgres/"],
  },
  { name: "datasets do not import fine-tuning", importers: ["server/datasets/"], forbidden: ["server/finetune/"] },
  {
    name: "the error type, the log and the request context import none of the server's folders but settings/",
    importers: ["server/api-error.ts", "server/log.ts", "server/request-context.ts"],
    forbidden: SERVER_FOLDERS.filter((folder) => folder !== "server/settings/"),
  },
  {
    // Every process reads its settings first, before anything else is built.
    name: "settings/ imports nothing of the server",
    importers: ["server/settings/"],
    forbidden: [
      ...SERVER_FOLDERS.filter((folder) => folder !== "server/settings/"),
      ...readdirSync(path.join(ROOT, "server"))
        .filter((name) => name.endsWith(".ts"))
        .map((name) => `server/${name}`),
    ],
  },
  { name: "the server does not import the client's package", importers: ["server/"], forbidden: ["client/"] },
  { name: "the HTTP core does not import ops/", importers: ["server/http/"], forbidden: ["server/ops/"] },
  { name: "ops/ does not import inference/", importers: ["server/ops/"], forbidden: ["server/inference/"] },
  { name: "inference does not import fine-tuning", importers: ["server/inference/"], forbidden: ["server/finetune/"] },
  {
    name: "fine-tuning reaches the embedded model through its public surface and light modules",
    importers: ["server/finetune/"],
    forbidden: ["server/inference/local/"],
    except: [
      "server/finetune/local/",
      "server/inference/local/index.ts",
      "server/inference/local/lora-merge.ts",
      "server/inference/local/math.ts",
      "server/inference/local/tensor-file.ts",
    ],
  },
  { name: "nothing outside test/ imports test/", importers: OUTSIDE_TESTS, forbidden: ["test/"] },
];

/**
 * File-level cycles in server/ that were there before issue 44 and are left for later (one
 * of each pair imports only types, or one error class, from the other). A new one fails.
 */
const KNOWN_FILE_CYCLES: readonly string[] = [
  "server/inference/catalog-file.ts server/inference/catalog.ts",
  "server/finetune/runner.ts server/finetune/upstream/upstream-training.ts",
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
    .map((name) => name.split(path.sep).join("/"))
    .filter((name) => name.endsWith(".ts") && !/(^|\/)(node_modules|dist)\//.test(name))
    .map((name) => path.posix.join(dir, name));
}

const within = (file: string, places: readonly string[]) => places.some((place) => file.startsWith(place));

function violations(edges: readonly ImportEdge[], rule: LayerRule): string[] {
  const except = rule.except ?? [];
  return edges
    .filter((edge) => within(edge.from, rule.importers) && within(edge.to, rule.forbidden))
    .filter((edge) => !within(edge.from, except) && !within(edge.to, except))
    .map((edge) => `${edge.from} imports ${edge.to}`);
}

/** Strongly connected components of more than one node (Tarjan), each sorted. */
function cycles(edges: readonly { from: string; to: string }[]): string[][] {
  const next = new Map<string, Set<string>>();
  for (const { from, to } of edges) if (from !== to) next.set(from, (next.get(from) ?? new Set()).add(to));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node) as number);
    stack.push(node);
    for (const to of next.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node) as number, low.get(to) as number));
      } else if (stack.includes(to)) low.set(node, Math.min(low.get(node) as number, index.get(to) as number));
    }
    if (low.get(node) === index.get(node)) {
      const component = stack.splice(stack.indexOf(node));
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of next.keys()) if (!index.has(node)) visit(node);
  return found;
}

/** A server file's folder (`server/http`), or the file itself for one at the server's root. */
function serverNode(file: string): string {
  const parts = file.split("/");
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : file;
}

const edgesUnder = (dirs: readonly string[]) =>
  dirs
    .flatMap((dir) => typeScriptFilesUnder(dir))
    .flatMap((file) => importsOf(file, readFileSync(path.join(ROOT, file), "utf8")));

const allEdges = edgesUnder(OUTSIDE_TESTS.map((dir) => dir.replace(/\/$/, "")));
const serverEdges = allEdges.filter((edge) => edge.from.startsWith("server/") && edge.to.startsWith("server/"));

describe("layers import downward only", () => {
  for (const rule of RULES) {
    it(rule.name, () => {
      assert.deepEqual(violations(allEdges, rule), []);
    });
  }

  it("the service's error type is declared at the server's root, not in the HTTP layer", () => {
    const declaring = typeScriptFilesUnder("server").filter((file) =>
      /^export class ApiError\b/m.test(readFileSync(path.join(ROOT, file), "utf8")),
    );
    assert.deepEqual(declaring, ["server/api-error.ts"]);
  });

  it("no import cycle between the server's folders", () => {
    const folderEdges = serverEdges.map((edge) => ({ from: serverNode(edge.from), to: serverNode(edge.to) }));
    assert.deepEqual(cycles(folderEdges), []);
  });

  it("no import cycle between the server's files but the known ones", () => {
    const found = cycles(serverEdges).map((component) => component.join(" "));
    assert.deepEqual(
      found.filter((cycle) => !KNOWN_FILE_CYCLES.includes(cycle)),
      [],
    );
  });

  it("the scan sees every folder's imports, the edge's mapping of store errors among them", () => {
    assert.ok(serverEdges.length > 300, `only ${serverEdges.length} server imports found`);
    // common/ imports nothing (it is pure): seen as what the others import.
    for (const dir of OUTSIDE_TESTS)
      assert.ok(
        allEdges.some((e) => e.from.startsWith(dir) || e.to.startsWith(dir)),
        `no import seen from or to ${dir}`,
      );
    assert.ok(
      serverEdges.some((e) => e.from === "server/http/store-errors.ts" && e.to === "server/store/errors.ts"),
      "server/http/store-errors.ts → server/store/errors.ts not seen",
    );
  });

  it("an upward import of any form is caught: multi-line, type-only, re-export, dynamic", () => {
    const text = [
      'import {\n  fromStoreError,\n  meantApiError,\n} from "../../http/store-errors.ts";',
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

  it("a cycle is found however long, and a chain is not one", () => {
    const chain = [
      { from: "a", to: "b" },
      { from: "b", to: "c" },
    ];
    assert.deepEqual(cycles(chain), []);
    assert.deepEqual(cycles([...chain, { from: "c", to: "a" }, { from: "c", to: "d" }]), [["a", "b", "c"]]);
  });
});
