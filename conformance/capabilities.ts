/**
 * What an implementation says it implements, and what each transcript needs.
 *
 * A profile's `implements` lists capabilities (`chat.completions`, `models`, `datasets`,
 * …) or operation ids of the contract (`createChatCompletion`); a transcript runs only
 * when every operation it calls (its own steps and those of the setups it uses) is
 * implemented, and is reported as *not implemented* otherwise. Requests to paths that
 * are no operation (a deliberate 404) need nothing.
 *
 * `profileNeeds` reads which profile values a transcript uses (`{{models.tools}}`, an
 * `auth: suspended` step, …): each must be declared in its `requires`, so a profile
 * without the value skips the transcript instead of failing it with a template error.
 */
import type { Contract } from "./contract.ts";
import type { Step, Transcript } from "./transcript.ts";

/** Capability names an implementer declares, each a set of operations of the contract. */
export function capabilityOperations(contract: Contract): Map<string, string[]> {
  const ids = contract.operations.map((o) => o.id);
  const byCollection = (collection: string) =>
    contract.operations.filter((o) => o.template.startsWith(`/accounts/{account}/${collection}`)).map((o) => o.id);
  const sft = byCollection("supervisedFineTuningJobs");
  const dpo = byCollection("dpoJobs");
  const datasets = ids.filter((id) => /Dataset/.test(id));
  const table: [string, string[]][] = [
    ["responses", ["createResponse"]],
    ["chat.completions", ["createChatCompletion"]],
    ["completions", ["createCompletion"]],
    ["messages", ["createMessage"]],
    ["models", ["listModels", "getModel"]],
    ["datasets", datasets],
    ["fineTuning.sft", sft],
    ["fineTuning.dpo", dpo],
    ["fineTuning", [...sft, ...dpo]],
  ];
  return new Map(table.map(([name, ops]) => [name, ops.filter((op) => ids.includes(op))]));
}

export class CapabilityError extends Error {
  override name = "CapabilityError";
}

/**
 * The operation ids an `implements` list stands for; undefined (the profile has no
 * `implements`) means every operation. An unknown name is an error naming the closest ones.
 */
export function implementedOperations(
  contract: Contract,
  implementsList: string[] | undefined,
): Set<string> | undefined {
  if (implementsList === undefined) return undefined;
  const capabilities = capabilityOperations(contract);
  const ids = contract.operations.map((o) => o.id);
  const out = new Set<string>();
  for (const name of implementsList) {
    const ops = capabilities.get(name) ?? (ids.includes(name) ? [name] : undefined);
    if (!ops)
      throw new CapabilityError(
        `implements: unknown capability ${JSON.stringify(name)}${didYouMean(name, [...capabilities.keys(), ...ids])}`,
      );
    for (const op of ops) out.add(op);
  }
  return out;
}

/** The operations a transcript's steps call (not its cleanup), by id; paths of no operation are left out. */
export function operationsOf(t: Transcript, contract: Contract): Set<string> {
  const ops = new Set<string>();
  for (const step of t.steps) {
    const op = contract.findOperation(step.request.method, templatePath(step));
    if (op) ops.add(op.id);
  }
  return ops;
}

/** A step's path with every template replaced by a plain segment, relative to `{base_url}`. */
export function templatePath(step: Step): string {
  let p = step.request.path.replace(/\{\{[^}]*\}\}/g, "x").split("?")[0] as string;
  if (step.request.base === "origin" && p.startsWith("/v1/")) p = p.slice(3);
  return p;
}

/** The operations a transcript needs that are not implemented (its setups' included). */
export function missingOperations(
  t: Transcript,
  byId: Map<string, Transcript>,
  contract: Contract,
  implemented: Set<string>,
): string[] {
  const missing = new Set<string>();
  const visit = (x: Transcript, seen: Set<string>) => {
    if (seen.has(x.id)) return;
    seen.add(x.id);
    for (const op of operationsOf(x, contract)) if (!implemented.has(op)) missing.add(op);
    for (const id of Object.values(x.uses)) {
      const setup = byId.get(id);
      if (setup) visit(setup, seen);
    }
  };
  visit(t, new Set());
  return [...missing].sort();
}

/** Profile roots whose values transcripts read, and the values every profile has. */
const NEEDED_ROOTS = ["accounts", "models", "settings", "capabilities", "faults"] as const;
const ALWAYS_PRESENT = new Set(["accounts.primary", "accounts.secondary", "models.chat"]);

/**
 * The profile values a transcript uses: `{{models.tools}}`, `{{settings.mediaMaxBytes}}`
 * anywhere in a template expression, an account role in an `auth`, and the capabilities
 * its expectations branch on. Values every profile has (primary and secondary accounts,
 * the chat model) are left out.
 */
export function profileNeeds(t: Transcript): string[] {
  const needs = new Set<string>();
  const text = t.document.toString();
  for (const expr of text.matchAll(/\{\{([^{}]*)\}\}/g)) {
    for (const m of (expr[1] as string).matchAll(
      new RegExp(`(?<![\\w.])(${NEEDED_ROOTS.join("|")})\\.([A-Za-z_]\\w*)`, "g"),
    ))
      needs.add(`${m[1]}.${m[2]}`);
  }
  for (const step of [...t.steps, ...t.cleanup]) {
    const auth = step.request.auth;
    const role =
      typeof auth === "string" ? auth : auth?.key === undefined && auth?.header === undefined ? auth?.role : undefined;
    if (role && role !== "none") needs.add(`accounts.${role}`);
  }
  return [...needs].filter((n) => !ALWAYS_PRESENT.has(n)).sort();
}

/** ` (did you mean a, b?)` with the names closest to `name`, or nothing when none is close. */
export function didYouMean(name: string, candidates: string[], limit = 3): string {
  const scored = [...new Set(candidates)]
    .map((c) => ({
      c,
      d: distance(name.toLowerCase(), c.toLowerCase()),
      contains: c.toLowerCase().includes(name.toLowerCase()) || name.toLowerCase().includes(c.toLowerCase()),
    }))
    .filter((x) => x.contains || x.d <= Math.max(2, Math.floor(name.length / 3)))
    .sort((a, b) => a.d - b.d || a.c.localeCompare(b.c))
    .slice(0, limit)
    .map((x) => x.c);
  return scored.length ? ` (did you mean ${scored.join(", ")}?)` : "";
}

/** Levenshtein distance. */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(
        (prev[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    prev = row;
  }
  return prev[b.length] as number;
}
