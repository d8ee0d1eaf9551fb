/**
 * The one module that reads the process environment (a test keeps it so). Settings with
 * fixed names are read through the table (`readSettings`); credentials are read by the
 * name the routing file or the catalogue gives them (`apiKeyEnv`), when the provider or
 * trainer that needs one is made, so they are not rows of the table.
 */
import type { Reader } from "./table.ts";
import { type Environment, parseSettings, type SettingsOf } from "./parse.ts";

/** This process's settings; throws a SettingsError naming every bad variable. */
export function readSettings<R extends Reader>(reader: R): SettingsOf<R> {
  return parseSettings(process.env, reader);
}

/** The value of the credential variable `name` (unset: undefined). */
export function credential(name: string | undefined): string | undefined {
  return name ? process.env[name] : undefined;
}

/** The environment as it is, for the few checks made before settings are read (the seed guard). */
export function processEnvironment(): Environment {
  return process.env;
}
