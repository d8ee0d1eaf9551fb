/**
 * The change-pair corpus (test/contract-diff/corpus/): realistic API changes, each with
 * the verdict we expect and the level oasdiff's documented checkers give it.
 *
 * - `corpus/<family>.yaml`: many pairs as fragments. Each file has an optional `template`
 *   (merged onto corpus/template.yaml) and `pairs`; a pair's `base` is a JSON merge patch
 *   (RFC 7386: objects merge, `null` deletes, arrays replace) onto the template, its `head`
 *   a merge patch onto the base, so only the change is written. `version` (3.0 or 3.1) and
 *   `format` (yaml or json) say how the documents are written to disk.
 * - `corpus/trees/<name>/`: real multi-file documents, `base/` and `head/` each with an
 *   `openapi.yaml` or `openapi.json` referring to other files, and a `pair.yaml`.
 *
 * `expect` lists every change reported, as `LEVEL rule-id` (empty: no change), and
 * `reverse`, when given, what comparing head → base reports; `error`
 * (instead) is a pattern the one-line message of an exit-2 input error must match.
 * `oasdiff` is the highest level oasdiff's checkers document for the change (ERR, WARN,
 * INFO or none): the agreement figure in docs/contract-review.md compares the two.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";

export const corpusDir = join(import.meta.dirname, "corpus");

export type OasdiffLevel = "ERR" | "WARN" | "INFO" | "none";

export interface CorpusPair {
  /** `family/id`, or `trees/name`. */
  name: string;
  intent: string;
  version: "3.0" | "3.1";
  format: "yaml" | "json";
  /** Full documents, for fragment pairs. */
  base?: Record<string, unknown>;
  head?: Record<string, unknown>;
  /** Directory holding base/ and head/, for multi-file pairs. */
  tree?: string;
  expect: string[];
  /** What head → base reports, when the pair is also run backwards. */
  reverse?: string[];
  error?: string;
  oasdiff: OasdiffLevel;
  args: string[];
}

type Json = Record<string, unknown>;

function isPlainObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** RFC 7386 JSON merge patch, on copies. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return structuredClone(patch);
  const result: Json = isPlainObject(target) ? structuredClone(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

interface RawPair {
  id: string;
  intent: string;
  version?: "3.0" | "3.1";
  format?: "yaml" | "json";
  base?: Json;
  head?: Json;
  expect?: string[];
  reverse?: string[];
  error?: string;
  oasdiff: OasdiffLevel;
  args?: string[];
}

function fragmentPairs(file: string, template: Json): CorpusPair[] {
  const family = file.replace(/\.yaml$/, "");
  const data = parse(readFileSync(join(corpusDir, file), "utf8")) as {
    template?: Json;
    version?: "3.0" | "3.1";
    format?: "yaml" | "json";
    pairs: RawPair[];
  };
  const familyTemplate = mergePatch(template, data.template ?? {}) as Json;
  return data.pairs.map((raw) => {
    const version = raw.version ?? data.version ?? "3.1";
    const start = mergePatch(familyTemplate, { openapi: version === "3.0" ? "3.0.3" : "3.1.0" });
    const base = mergePatch(start, raw.base ?? {}) as Json;
    const head = mergePatch(base, raw.head ?? {}) as Json;
    return {
      name: `${family}/${raw.id}`,
      intent: raw.intent,
      version,
      format: raw.format ?? data.format ?? "yaml",
      base,
      head,
      expect: raw.expect ?? [],
      ...(raw.reverse !== undefined ? { reverse: raw.reverse } : {}),
      ...(raw.error !== undefined ? { error: raw.error } : {}),
      oasdiff: raw.oasdiff,
      args: raw.args ?? [],
    };
  });
}

function treePairs(): CorpusPair[] {
  const trees = join(corpusDir, "trees");
  return readdirSync(trees)
    .sort()
    .map((name) => {
      const meta = parse(readFileSync(join(trees, name, "pair.yaml"), "utf8")) as RawPair & { version: "3.0" | "3.1" };
      return {
        name: `trees/${name}`,
        intent: meta.intent,
        version: meta.version,
        format: meta.format ?? "yaml",
        tree: join(trees, name),
        expect: meta.expect ?? [],
        ...(meta.error !== undefined ? { error: meta.error } : {}),
        oasdiff: meta.oasdiff,
        args: meta.args ?? [],
      };
    });
}

export function loadCorpus(): CorpusPair[] {
  const template = parse(readFileSync(join(corpusDir, "template.yaml"), "utf8")) as Json;
  const files = readdirSync(corpusDir)
    .filter((f) => f.endsWith(".yaml") && f !== "template.yaml")
    .sort();
  return [...files.flatMap((f) => fragmentPairs(f, template)), ...treePairs()];
}

/** Whether the expectation fails the default policy (any breaking change, WARN included). */
export function oursBreaking(pair: CorpusPair): boolean {
  return pair.error === undefined && pair.expect.some((e) => !e.startsWith("INFO"));
}

export function oursErr(pair: CorpusPair): boolean {
  return pair.expect.some((e) => e.startsWith("ERR"));
}

export interface Agreement {
  pairs: number;
  /** Same verdict with WARN counted as breaking on both sides (`--fail-on WARN`). */
  failOnWarn: number;
  /** Same verdict with only ERR counted as breaking on both sides (`--fail-on ERR`). */
  failOnErr: number;
  /** Pairs whose change oasdiff's checkers read (its level is not `none`, or ours reports nothing breaking either). */
  read: number;
  /** Of those, same verdict with WARN counted as breaking. */
  readFailOnWarn: number;
}

export function agreement(pairs: CorpusPair[]): Agreement {
  const judged = pairs.filter((p) => p.error === undefined);
  const agreesAtWarn = (p: CorpusPair) => oursBreaking(p) === (p.oasdiff === "ERR" || p.oasdiff === "WARN");
  const read = judged.filter((p) => p.oasdiff !== "none" || !oursBreaking(p));
  return {
    pairs: judged.length,
    failOnWarn: judged.filter(agreesAtWarn).length,
    failOnErr: judged.filter((p) => oursErr(p) === (p.oasdiff === "ERR")).length,
    read: read.length,
    readFailOnWarn: read.filter(agreesAtWarn).length,
  };
}
