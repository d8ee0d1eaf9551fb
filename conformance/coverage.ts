/**
 * Coverage of the interface document: which operations, (operation, status) pairs, error
 * codes and rules a run touched, out of all of them; and the static check that every
 * operation of the contract, every rule of the catalogue and every error code has a
 * transcript.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import type { Contract, Operation } from "./contract.ts";
import { isPlainObject } from "./matchers.ts";
import { kitRoot, type Expectation, type Step, type Transcript } from "./transcript.ts";

export interface Rule {
  id: string;
  text: string;
  /** Where the rule comes from: the interface document's section, or a decision. */
  source: string;
}

export function loadRules(file = path.join(kitRoot(), "rules.yaml")): Rule[] {
  const raw = parseYaml(readFileSync(file, "utf8")) as Record<string, { text: string; source: string }>;
  return Object.entries(raw).map(([id, r]) => ({ id, text: r.text, source: r.source }));
}

export interface CoverageCount {
  total: number;
  touched: number;
  missing: string[];
}

export interface CoverageSummary {
  operations: CoverageCount;
  statusCodes: CoverageCount;
  errorCodes: CoverageCount;
  rules: CoverageCount & { passed: number };
}

export class CoverageTracker {
  readonly #contract: Contract;
  readonly #rules: Rule[];
  readonly #operations = new Set<string>();
  readonly #statuses = new Set<string>();
  readonly #codes = new Set<string>();
  readonly #rulesTouched = new Set<string>();
  readonly #rulesFailed = new Set<string>();

  constructor(contract: Contract, rules: Rule[]) {
    this.#contract = contract;
    this.#rules = rules;
  }

  exchange(
    op: Operation | undefined,
    status: number,
    body: unknown,
    events?: { event: string | undefined; json: unknown }[],
  ): void {
    if (op) {
      this.#operations.add(op.id);
      this.#statuses.add(`${op.id} ${status}`);
    }
    const code = isPlainObject(body) && isPlainObject(body.error) ? body.error.code : undefined;
    if (typeof code === "string") this.#codes.add(code);
    for (const e of events ?? []) {
      if (e.event !== "error" || !isPlainObject(e.json)) continue;
      const c =
        typeof e.json.code === "string" ? e.json.code : isPlainObject(e.json.error) ? e.json.error.code : undefined;
      if (typeof c === "string") this.#codes.add(c);
    }
  }

  rules(ids: Iterable<string>, passed: boolean): void {
    for (const id of ids) {
      this.#rulesTouched.add(id);
      if (!passed) this.#rulesFailed.add(id);
    }
  }

  summary(): CoverageSummary {
    const ops = this.#contract.operations;
    const statusPairs = ops.flatMap((op) => op.statuses.map((s) => `${op.id} ${s}`));
    const ruleIds = this.#rules.map((r) => r.id);
    const touchedRules = ruleIds.filter((id) => this.#rulesTouched.has(id));
    return {
      operations: count(
        ops.map((o) => o.id),
        this.#operations,
      ),
      statusCodes: count(statusPairs, this.#statuses),
      errorCodes: count(this.#contract.errorCodes, this.#codes),
      rules: {
        ...count(ruleIds, this.#rulesTouched),
        passed: touchedRules.filter((id) => !this.#rulesFailed.has(id)).length,
      },
    };
  }
}

function count(all: string[], touched: Set<string>): CoverageCount {
  return {
    total: all.length,
    touched: all.filter((x) => touched.has(x)).length,
    missing: all.filter((x) => !touched.has(x)),
  };
}

// ---------------------------------------------------------------------------
// Static coverage: what the transcripts would touch, read from the files.
// ---------------------------------------------------------------------------

export interface StaticCoverage {
  /** Operation id → transcripts that request it. */
  operations: Map<string, string[]>;
  /** Error code → transcripts that expect it. */
  errorCodes: Map<string, string[]>;
  /** Rule id → transcripts that name it. */
  rules: Map<string, string[]>;
  /** Rule ids named by transcripts but not in the catalogue. */
  unknownRules: { transcript: string; rule: string }[];
  /** Request paths that match no operation (fine for deliberate 404/405 checks). */
  unmatchedPaths: { transcript: string; path: string }[];
}

export function staticCoverage(transcripts: Transcript[], contract: Contract, rules: Rule[]): StaticCoverage {
  const operations = new Map<string, string[]>(contract.operations.map((o) => [o.id, []]));
  const errorCodes = new Map<string, string[]>(contract.errorCodes.map((c) => [c, []]));
  const ruleMap = new Map<string, string[]>(rules.map((r) => [r.id, []]));
  const unknownRules: StaticCoverage["unknownRules"] = [];
  const unmatchedPaths: StaticCoverage["unmatchedPaths"] = [];
  const push = (map: Map<string, string[]>, key: string, id: string) => {
    const list = map.get(key);
    if (list && !list.includes(id)) list.push(id);
  };
  for (const t of transcripts) {
    for (const r of t.rules) {
      if (ruleMap.has(r)) push(ruleMap, r, t.id);
      else unknownRules.push({ transcript: t.id, rule: r });
    }
    for (const step of [...t.steps, ...t.cleanup]) {
      for (const r of step.rules) {
        if (ruleMap.has(r)) push(ruleMap, r, t.id);
        else unknownRules.push({ transcript: t.id, rule: r });
      }
      if (step.cleanup) continue;
      const p = templatePath(step);
      const op = contract.findOperation(step.request.method, p);
      if (op) push(operations, op.id, t.id);
      else unmatchedPaths.push({ transcript: t.id, path: `${step.request.method} ${p}` });
      for (const code of expectedCodes(step)) push(errorCodes, code, t.id);
    }
  }
  return { operations, errorCodes, rules: ruleMap, unknownRules, unmatchedPaths };
}

/** A step's path with every template replaced by a plain segment, relative to `{base_url}`. */
function templatePath(step: Step): string {
  let p = step.request.path.replace(/\{\{[^}]*\}\}/g, "x").split("?")[0] as string;
  if (step.request.base === "origin" && p.startsWith("/v1/")) p = p.slice(3);
  return p;
}

function expectedCodes(step: Step): string[] {
  const codes: string[] = [];
  const fromExpect = (e: Expectation | undefined) => {
    if (!e) return;
    collectCodes(e.error?.code, codes);
    if (isPlainObject(e.body) && isPlainObject(e.body.error)) collectCodes(e.body.error.code, codes);
    if (e.stream)
      for (const p of [
        ...(e.stream.events ?? []),
        ...(e.stream.includes ?? []),
        ...(e.stream.last ? [e.stream.last] : []),
      ])
        if (isPlainObject(p.data)) collectCodes((p.data as Record<string, unknown>).code, codes);
    for (const alt of e.anyOf ?? []) fromExpect(alt);
  };
  fromExpect(step.expect);
  fromExpect(step.poll?.until);
  return codes;
}

function collectCodes(value: unknown, into: string[]): void {
  if (typeof value === "string" && /^[A-Z_]+$/.test(value)) into.push(value);
  else if (isPlainObject(value) && Array.isArray(value.$oneOf)) for (const v of value.$oneOf) collectCodes(v, into);
}
