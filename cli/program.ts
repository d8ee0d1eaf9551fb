/**
 * The command tree (commander) and `run`, which parses a command line, runs it and
 * returns the exit code, having printed any error as code, message and request id.
 * cli/main.ts calls it with the process's streams; tests call it with their own.
 */
import { Command, CommanderError, Option } from "commander";
import { setIo } from "./command.ts";
import { chatCommand } from "./commands/chat.ts";
import { conformanceCommand } from "./commands/conformance.ts";
import { datasetsCommand } from "./commands/datasets.ts";
import { jobsCommand } from "./commands/jobs.ts";
import { modelsCommand } from "./commands/models.ts";
import { DEFAULT_BASE_URL, ENV, type GlobalOptions, type Io } from "./context.ts";
import { describeError, EXIT } from "./errors.ts";

export const PROGRAM_NAME = "itk";
export const VERSION = "0.2.0";

const FOOTER = `
Settings (a flag wins over the environment):
  --base-url   ${ENV.baseUrl}   the service, ending in /v1 (default ${DEFAULT_BASE_URL})
  --api-key    ${ENV.apiKey}    the API key
  --account    ${ENV.account}    the account of /accounts/{account} paths (default: the one the key names)

Exit codes: 0 ok, 1 unexpected error, 2 usage, 3 key or permission (401/403), 4 not found (404),
5 request refused (400/409/413), 6 balance or limits (402/429), 7 service unavailable (5xx, unreachable),
8 outcome failed (validation, job, conformance), 9 wait timed out, 10 declined at the prompt, 130 interrupted.

Examples:
  $ export ${ENV.apiKey}=sk-dev-acme-00000000000000000000000000000000
  $ ${PROGRAM_NAME} datasets upload pirate pirate.jsonl --create
  $ ${PROGRAM_NAME} jobs create --base-model tiny-chat --dataset pirate --output-model pirate-chat --watch
  $ ${PROGRAM_NAME} chat --model accounts/acme/models/pirate-chat
Reference: docs/cli.md`;

/** Every command of the tree, the program first. */
export function allCommands(command: Command): Command[] {
  return [command, ...command.commands.flatMap((c) => allCommands(c as Command))];
}

export function buildProgram(io: Io, signal?: AbortSignal): Command {
  const program = new Command(PROGRAM_NAME)
    .description(
      "Command-line tool of the inference and fine-tuning service: datasets, fine-tuning jobs, models, chat, and the conformance kit.",
    )
    .version(VERSION, "-V, --version", "print the version")
    .addOption(
      new Option(
        "--base-url <url>",
        `the service's base URL, ending in /v1 (env ${ENV.baseUrl}; default ${DEFAULT_BASE_URL})`,
      ),
    )
    .addOption(new Option("--api-key <key>", `the API key (env ${ENV.apiKey})`))
    .addOption(new Option("--account <id>", `the account (env ${ENV.account}; default: the account the key names)`))
    .option("--json", "print results as JSON on stdout, errors as JSON on stderr; no progress bars")
    .option("--debug", "show every HTTP call and, on an error, the stack trace")
    .option("--no-color", "no colours (NO_COLOR in the environment does the same)")
    .addHelpText("after", FOOTER);

  program.addCommand(datasetsCommand());
  program.addCommand(jobsCommand(signal));
  program.addCommand(modelsCommand());
  program.addCommand(chatCommand(signal));
  program.addCommand(conformanceCommand());

  for (const command of allCommands(program)) {
    command
      .exitOverride()
      .showHelpAfterError("(add --help for usage)")
      .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) });
    if (command !== program) command.helpOption("-h, --help", "show help for this command");
    // A group without a subcommand shows its help and is a usage error.
    if (command.commands.length > 0 && command !== program) command.action(() => command.help({ error: true }));
  }
  setIo(program, io);
  return program;
}

/** Runs one command line (without the node and script arguments); resolves to the exit code. */
export async function run(argv: string[], io: Io, signal?: AbortSignal): Promise<number> {
  const program = buildProgram(io, signal);
  try {
    await program.parseAsync(argv, { from: "user" });
    return EXIT.OK;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help, --version, and `help <command>` end here too, with exit code 0.
      if (
        error.code === "commander.helpDisplayed" ||
        error.code === "commander.version" ||
        (error.code === "commander.help" && error.exitCode === 0)
      )
        return EXIT.OK;
      return EXIT.USAGE;
    }
    const options = program.opts<GlobalOptions>();
    const json = options.json === true || argv.includes("--json");
    const debug = options.debug === true || argv.includes("--debug");
    const baseUrl = options.baseUrl ?? io.env[ENV.baseUrl] ?? DEFAULT_BASE_URL;
    const report = describeError(error, { baseUrl });
    if (json) io.stderr.write(JSON.stringify(report.json) + "\n");
    else io.stderr.write(report.lines.filter((l) => !(debug && l.includes("--debug for the stack"))).join("\n") + "\n");
    if (debug && error instanceof Error && error.stack) io.stderr.write(`\n${error.stack}\n`);
    return report.exitCode;
  }
}
