/**
 * The admin command: `npm run admin -- <command> [args]` (`node server/admin/cli.ts`).
 * Works on the same store as the server (DATABASE_URL, else the SQLite file in DATA_DIR);
 * safe to run while servers run (SQLite in WAL mode with a busy timeout, or PostgreSQL).
 *
 * Exit status: 0 done, 1 the store refused (no such account, duplicate id, …), 2 bad usage
 * (an unknown command or option, or a variable of settings/table.ts with a bad value).
 */
import { parseArgs } from "node:util";
import { StoreError } from "../store/errors.ts";
import { readSettings } from "../settings/environment.ts";
import { SettingsError, type SettingsOf } from "../settings/parse.ts";
import { openStore, storeConfig } from "../store/open.ts";
import { CATALOG_COMMANDS, CatalogProblem } from "./catalog-commands.ts";
import { COMMANDS, isCommandGroup, UsageError, usageText } from "./commands.ts";
import type { CommandArgs } from "./commands.ts";

const OPTIONS = {
  balance: { type: "string" },
  rpm: { type: "string" },
  budget: { type: "string" },
  account: { type: "string" },
  "payment-method": { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

/** The words that ask for help instead of naming a command. */
const HELP_WORDS: ReadonlySet<string> = new Set(["help", "--help", "-h"]);

async function main(argv: string[]): Promise<number> {
  let settings: SettingsOf<"admin">;
  try {
    settings = readSettings("admin");
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error;
    console.error(`Error: ${error.message}`);
    return 2;
  }
  const [group = "", action = "", ...rest] = argv;
  if (group === "") return usageFailure("No command given.");
  if (HELP_WORDS.has(group)) return printUsage(action); // `help`, `help limits`
  if (HELP_WORDS.has(action) && isCommandGroup(group)) return printUsage(group); // `limits --help`
  const fileCommand = CATALOG_COMMANDS[`${group} ${action}`];
  if (fileCommand) return runFileCommand(fileCommand, rest, settings);
  const command = COMMANDS[`${group} ${action}`];
  if (!command) return usageFailure(`Unknown command "${[group, action].join(" ").trim()}".`);
  let args: CommandArgs;
  try {
    const parsed = parseArgs({ args: rest, options: OPTIONS, allowPositionals: true, strict: true });
    if (parsed.values.help) {
      console.log(`Usage: npm run admin -- ${command.usage}`);
      return 0;
    }
    args = { positionals: parsed.positionals, options: parsed.values };
  } catch (error) {
    return usageFailure((error as Error).message, command.usage);
  }
  const store = await openStore(storeConfig(settings));
  try {
    console.log(await command.run(store, args));
    return 0;
  } catch (error) {
    if (error instanceof UsageError) return usageFailure(error.message, command.usage);
    if (error instanceof StoreError) {
      console.error(`Error: ${error.message}`);
      return 1;
    }
    throw error;
  } finally {
    await store.close();
  }
}

/** A command over the configuration files, which needs no store. */
function runFileCommand(
  command: (typeof CATALOG_COMMANDS)[string],
  args: string[],
  settings: SettingsOf<"admin">,
): number {
  try {
    const { positionals, values } = parseArgs({ args, options: { help: OPTIONS.help }, allowPositionals: true });
    if (values.help) {
      console.log(`Usage: npm run admin -- ${command.usage}`);
      return 0;
    }
    console.log(command.run(positionals, settings));
    return 0;
  } catch (error) {
    if (error instanceof CatalogProblem) {
      console.error(`Error: ${error.message}`);
      return 1;
    }
    return usageFailure((error as Error).message, command.usage);
  }
}

/** Help asked for: the usage of a group's commands (every command when `group` is empty or unknown), exit 0. */
function printUsage(group: string): number {
  console.log(usageText(isCommandGroup(group) ? group : undefined));
  return 0;
}

function usageFailure(message: string, usage?: string): number {
  console.error(`Error: ${message}`);
  console.error(usage === undefined ? usageText() : `Usage: npm run admin -- ${usage}`);
  return 2;
}

// Output piped into a reader that stops early (`accounts list | head`): stop quietly, as `yes | head` does.
for (const stream of [process.stdout, process.stderr])
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
    process.exit(0);
  });

process.exitCode = await main(process.argv.slice(2));
