/**
 * Glue between commander and the commands: every action gets a Context built from the
 * global options (wherever they were written on the line), and small parsers for option
 * values that fail as usage errors (exit 2).
 */
import { type Command, InvalidArgumentError } from "commander";
import { Context, type GlobalOptions, type Io } from "./context.ts";

/** The I/O the program was built with (tests pass their own). */
const ioOf = new WeakMap<Command, Io>();

export function setIo(program: Command, io: Io): void {
  ioOf.set(program, io);
}

function rootOf(command: Command): Command {
  let c = command;
  while (c.parent) c = c.parent;
  return c;
}

/** The context of a command's action: its options merged with the global ones. */
export function contextOf(command: Command): Context {
  const io = ioOf.get(rootOf(command));
  if (!io) throw new Error("the program was built without I/O");
  return new Context(command.optsWithGlobals<GlobalOptions>(), io);
}

/**
 * Wraps an action so it receives (context, ...positional arguments, options). commander
 * calls actions with the arguments, then the options, then the command.
 */
export function act<Args extends unknown[], Options>(
  fn: (ctx: Context, options: Options, ...args: Args) => Promise<void>,
) {
  return async (...raw: unknown[]): Promise<void> => {
    const command = raw.at(-1) as Command;
    const options = raw.at(-2) as Options;
    const args = raw.slice(0, -2) as Args;
    await fn(contextOf(command), options, ...args);
  };
}

export function integer(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    if (!/^-?\d+$/.test(value.trim())) throw new InvalidArgumentError(`not a whole number: ${value}`);
    const n = Number(value);
    if (n < min || n > max) throw new InvalidArgumentError(`must be between ${min} and ${max}`);
    return n;
  };
}

export function decimal(value: string): string {
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(value.trim()))
    throw new InvalidArgumentError(`not a number: ${value}`);
  return value.trim();
}

/** Seconds as milliseconds. */
export function seconds(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`not a positive number of seconds: ${value}`);
  return Math.round(n * 1000);
}
