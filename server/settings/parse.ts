/**
 * Reads the settings of one process from its environment, once, at start-up: each variable
 * of the table that the process reads, checked against its kind, or its default when unset
 * or empty. Every bad value is refused together in one line that names each variable and
 * what it must be (a SettingsError), never a stack trace; the rest of the code is handed
 * the typed result, not the environment.
 */
import { INVALID } from "./kinds.ts";
import { type Reader, type Setting, SETTINGS } from "./table.ts";

type Table = typeof SETTINGS;
export type SettingName = keyof Table;
type ValueOf<S> = S extends Setting<infer T, Reader> ? T : never;
type ReadersOf<S> = S extends Setting<unknown, infer R> ? R : never;

/** Every setting, typed. */
export type AllSettings = { readonly [K in SettingName]: ValueOf<Table[K]> };

/** The settings process `R` reads: another process's are not there, for the compiler either. */
export type SettingsOf<R extends Reader> = {
  readonly [K in SettingName as R extends ReadersOf<Table[K]> ? K : never]: ValueOf<Table[K]>;
};

export type Environment = Readonly<Record<string, string | undefined>>;

/** One or more variables hold values their kind refuses. */
export class SettingsError extends Error {
  override name = "SettingsError";
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(problems.join("; "));
    this.problems = problems;
  }
}

function refusal(name: string, setting: Setting<unknown>, text: string): string {
  const rule = `${name} must be ${setting.kind.mustBe}`;
  return setting.kind.secret
    ? `${rule} (the value is not repeated: it may hold a password)`
    : `${rule}, not ${JSON.stringify(text)}`;
}

function entries(): [SettingName, Setting<unknown>][] {
  return Object.entries(SETTINGS) as [SettingName, Setting<unknown>][];
}

export function parseSettings<R extends Reader>(env: Environment, reader: R): SettingsOf<R> {
  const context = { production: env.NODE_ENV === "production" };
  const values: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, setting] of entries()) {
    if (!(setting.readBy as readonly Reader[]).includes(reader)) continue;
    const text = env[name];
    if (text === undefined || text === "") {
      values[name] = setting.fallback(context);
      continue;
    }
    const value = setting.kind.read(text);
    if (value === INVALID) problems.push(refusal(name, setting, text));
    else values[name] = value;
  }
  if (problems.length > 0) throw new SettingsError(problems);
  return values as SettingsOf<R>;
}

/** A setting's default outside production: what a caller that passes no value gets (tests, the kit). */
export function defaultOf<K extends SettingName>(name: K): AllSettings[K] {
  return (SETTINGS[name] as Setting<unknown>).fallback({ production: false }) as AllSettings[K];
}
