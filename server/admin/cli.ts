/**
 * The admin command: `npm run admin -- <command> [args]` (`node server/admin/cli.ts`).
 * Works on the same store as the server (DATABASE_URL, else the SQLite file in DATA_DIR);
 * safe to run while servers run (SQLite in WAL mode with a busy timeout, or PostgreSQL).
 *
 * Exit status: 0 done, 1 the store refused (no such account, duplicate id, …), 2 bad usage.
 */
import { parseArgs } from "node:util";
import { ApiError } from "../http/errors.ts";
import { openStore, storeConfigFromEnv } from "../store/open.ts";
import { COMMANDS, UsageError, usageText } from "./commands.ts";
import type { CommandArgs } from "./commands.ts";

const OPTIONS = {
  balance: { type: "string" },
  rpm: { type: "string" },
  budget: { type: "string" },
  account: { type: "string" },
  "payment-method": { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

async function main(argv: string[]): Promise<number> {
  const [group = "", action = "", ...rest] = argv;
  if (group === "") return usageFailure("No command given.");
  if (group === "help" || group === "--help" || group === "-h") {
    console.log(usageText());
    return 0;
  }
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
  const store = await openStore(storeConfigFromEnv());
  try {
    console.log(await command.run(store, args));
    return 0;
  } catch (error) {
    if (error instanceof UsageError) return usageFailure(error.message, command.usage);
    if (error instanceof ApiError) {
      console.error(`Error: ${error.message}`);
      return 1;
    }
    throw error;
  } finally {
    await store.close();
  }
}

function usageFailure(message: string, usage?: string): number {
  console.error(`Error: ${message}`);
  console.error(usage === undefined ? usageText() : `Usage: npm run admin -- ${usage}`);
  return 2;
}

process.exitCode = await main(process.argv.slice(2));
