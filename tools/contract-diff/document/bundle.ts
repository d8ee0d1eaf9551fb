/**
 * Reads a document that may span many files into one: every file a relative `$ref`
 * reaches is read once (so cycles between files are harmless) and stored under
 * `x-contract-diff-files/<name>`, and each `$ref` is rewritten to a local pointer there.
 * The file's base name is kept as the last pointer segment, so `$ref: ./schemas/pet.yaml`
 * is still reported as `pet` (and `./defs.yaml#/Pet` as `Pet`).
 *
 * Remote references (`https://…`, any URL scheme) are refused: a review must not depend
 * on what a server answers today. Every `$ref` must resolve.
 */
import { parse } from "yaml";
import { isObject, lookupPointer, type Doc, type Node } from "../openapi.ts";
import { DocumentError } from "./errors.ts";
import type { FileSource } from "./sources.ts";
import { walkObjects } from "./walk.ts";

export const FILES_KEY = "x-contract-diff-files";

const MAX_FILES = 2000;

interface LoadedFile {
  path: string;
  /** The pointer prefix of the file's content in the bundle: `""` for the root. */
  prefix: string;
  content: unknown;
}

export interface Bundle {
  doc: Doc;
  /** Every file read, as labelled by the source (the root first). */
  files: string[];
}

/** Parses YAML or JSON text; a syntax error is a DocumentError naming the file and line. */
export function parseText(text: string, label: string): unknown {
  try {
    return parse(text, { maxAliasCount: 1000, prettyErrors: false, logLevel: "error" });
  } catch (error) {
    const message = ((error as Error).message ?? String(error)).split("\n")[0];
    throw new DocumentError(`${label}: not valid YAML or JSON: ${message}`, { cause: error });
  }
}

function pointerEscape(segment: string): string {
  return segment.replaceAll("~", "~0").replaceAll("/", "~1");
}

function fileName(path: string, taken: Set<string>): string {
  const base = (path.split(/[\\/]/).pop() ?? "file").replace(/\.(ya?ml|json)$/i, "") || "file";
  let name = base;
  for (let n = 2; taken.has(name); n++) name = `${base}-${n}`;
  taken.add(name);
  return name;
}

/** `checkRoot` vets the root file before any other file is read. */
export async function bundleDocument(
  rootPath: string,
  source: FileSource,
  checkRoot: (root: unknown, label: string) => void = () => {},
): Promise<Bundle> {
  const rootLabel = source.label(rootPath);
  const root = parseText(await source.read(rootPath), rootLabel);
  checkRoot(root, rootLabel);
  if (!isObject(root)) throw new DocumentError(`${rootLabel}: not an OpenAPI document (expected a mapping)`);
  const loaded = new Map<string, LoadedFile>([[rootPath, { path: rootPath, prefix: "", content: root }]]);
  const external: Record<string, unknown> = {};
  const names = new Set<string>();
  const queue: LoadedFile[] = [loaded.get(rootPath)!];
  const pending: Promise<void>[] = [];
  const original = new WeakMap<Node, string>();

  const fileFor = async (from: LoadedFile, target: string): Promise<LoadedFile> => {
    const path = source.resolve(from.path, target);
    const known = loaded.get(path);
    if (known !== undefined) return known;
    if (loaded.size >= MAX_FILES) throw new DocumentError(`${rootLabel}: more than ${MAX_FILES} files referenced`);
    const name = fileName(path, names);
    const file: LoadedFile = { path, prefix: `/${FILES_KEY}/${pointerEscape(name)}`, content: undefined };
    loaded.set(path, file);
    file.content = parseText(await source.read(path), source.label(path));
    external[name] = file.content;
    queue.push(file);
    return file;
  };

  const rewrite = async (node: Node, file: LoadedFile): Promise<void> => {
    const ref = node.$ref as string;
    const hash = ref.indexOf("#");
    const target = hash < 0 ? ref : ref.slice(0, hash);
    const pointer = hash < 0 ? "" : ref.slice(hash + 1);
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//")) {
      throw new DocumentError(
        `${source.label(file.path)}: remote $ref refused: ${ref} (only files next to the document are read; save it locally and refer to it by a relative path)`,
      );
    }
    if (pointer !== "" && !pointer.startsWith("/"))
      throw new DocumentError(`${source.label(file.path)}: unsupported $ref ${ref} (anchors and $id are not read)`);
    const owner = target === "" ? file : await fileFor(file, target);
    if (original.has(node)) return;
    node.$ref = `#${owner.prefix}${pointer}`;
    original.set(node, ref);
  };

  while (queue.length > 0) {
    const file = queue.shift()!;
    const refs = new Set<Node>();
    const collect = (node: Node) => {
      if (typeof node.$ref === "string" && !original.has(node)) refs.add(node);
    };
    walkObjects(file.content, collect, source.label(file.path));
    for (const node of refs) pending.push(rewrite(node, file));
    // Files are read in order of discovery; errors surface from the first failing read.
    await Promise.all(pending.splice(0));
  }
  const doc: Doc = Object.keys(external).length > 0 ? { ...root, [FILES_KEY]: external } : root;
  checkRefsResolve(doc, [...loaded.values()], source, original);
  return { doc, files: [...loaded.keys()].map((p) => source.label(p)) };
}

function checkRefsResolve(doc: Doc, files: LoadedFile[], source: FileSource, original: WeakMap<Node, string>): void {
  for (const file of files) {
    walkObjects(
      file.content,
      (node) => {
        if (typeof node.$ref === "string" && lookupPointer(doc, node.$ref) === undefined)
          throw new DocumentError(
            `${source.label(file.path)}: $ref ${original.get(node) ?? node.$ref} does not resolve`,
          );
      },
      source.label(file.path),
    );
  }
}
