/**
 * Which transcripts a run takes: `--area` and `--transcript` select (an unknown name is
 * an error with the closest names), and the profile's `implements` sets aside those that
 * call an operation the implementation does not have.
 */
import { didYouMean, implementedOperations, missingOperations } from "./capabilities.ts";
import type { Contract } from "./contract.ts";
import type { Profile } from "./profile.ts";
import type { Transcript } from "./transcript.ts";

/** A selection (areas, transcripts) that names nothing, or matches nothing: a usage error, never an empty pass. */
export class SelectionError extends Error {
  override name = "SelectionError";
}

/** The transcripts `--area` and `--transcript` select; an unknown name is an error with the closest names. */
/** `--area` and `--transcript`: areas and transcript ids (or names) to run; none of either: everything. */
export interface Selection {
  areas?: string[];
  transcripts?: string[];
}

export function select(all: Transcript[], options: Selection): Transcript[] {
  const candidates = all.filter((t) => !t.setup);
  const areas = [...new Set(candidates.map((t) => t.area))];
  for (const area of options.areas ?? []) {
    if (!areas.includes(area))
      throw new SelectionError(
        `no area ${JSON.stringify(area)}${didYouMean(area, areas) || ` (areas: ${areas.join(", ")}; to run only what an implementation has, list it in the profile's implements)`}`,
      );
  }
  const named = (t: Transcript, x: string) => x === t.id || x === t.name || x === `${t.id}.yaml`;
  for (const x of options.transcripts ?? []) {
    if (candidates.some((t) => named(t, x))) continue;
    // Close by id, else by name in another area (responses/stream-text → events/stream-text).
    const name = x.split("/").at(-1) ?? x;
    const hint =
      didYouMean(
        x,
        candidates.map((t) => t.id),
      ) ||
      didYouMean(
        name,
        candidates.map((t) => t.name),
      ).replace(
        /did you mean (.*)\?/,
        (_, names: string) =>
          `did you mean ${names
            .split(", ")
            .map((n) => candidates.find((t) => t.name === n)?.id ?? n)
            .join(", ")}?`,
      );
    throw new SelectionError(`no transcript ${JSON.stringify(x)}${hint}`);
  }
  const selected = candidates.filter(
    (t) =>
      (!options.areas?.length || options.areas.includes(t.area)) &&
      (!options.transcripts?.length || options.transcripts.some((x) => named(t, x))),
  );
  if (selected.length === 0)
    throw new SelectionError(
      `no transcript matches --area ${options.areas?.join(", ")} and --transcript ${options.transcripts?.join(", ")} together`,
    );
  return selected;
}

/**
 * The selected transcripts split by the profile's `implements`: those it can run, and those
 * that call an operation outside it (each with the operations it lacks).
 */
export function partitionByImplements(
  selected: Transcript[],
  all: Transcript[],
  contract: Contract,
  profile: Pick<Profile, "implements">,
): { runnable: Transcript[]; notImplemented: { transcript: Transcript; missing: string[] }[] } {
  const byId = new Map(all.map((t) => [t.id, t]));
  const implemented = implementedOperations(contract, profile.implements);
  const runnable: Transcript[] = [];
  const notImplemented: { transcript: Transcript; missing: string[] }[] = [];
  for (const t of selected) {
    const missing = implemented ? missingOperations(t, byId, contract, implemented) : [];
    if (missing.length) notImplemented.push({ transcript: t, missing });
    else runnable.push(t);
  }
  return { runnable, notImplemented };
}

/**
 * The setups a run of `runnable` uses, directly or through other setups. Setups are
 * transcripts of the `_setup` area and count in the report (a failed setup is a failure of
 * the implementation), so a run reports `selected + setups` transcripts: the number the
 * progress bar counts to and the summary adds up to.
 */
export function plannedSetups(runnable: Transcript[], all: Transcript[]): string[] {
  const byId = new Map(all.map((t) => [t.id, t]));
  const setups = new Set<string>();
  const visit = (t: Transcript) => {
    for (const id of Object.values(t.uses)) {
      if (setups.has(id)) continue;
      setups.add(id);
      const setup = byId.get(id);
      if (setup) visit(setup);
    }
  };
  runnable.forEach(visit);
  return [...setups].sort();
}
