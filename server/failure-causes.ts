/**
 * The `cause` chain of a failure in one line for the server's log: what the upstream or
 * the database really did behind the answer a client got. The answer itself carries only
 * the code and message meant for the client; this is never sent.
 */

/** How many causes deep the line goes: an undici failure nests three (fetch, socket, errno). */
const MAX_DEPTH = 5;

/**
 * The causes of `error`, outermost first, each as `Name: message (code)`, joined by ` ← `;
 * undefined when it has none. `error` itself is not in the line: the log has it already.
 */
export function causeChain(error: unknown): string | undefined {
  const causes: string[] = [];
  for (let cause = causeOf(error); cause !== undefined && causes.length < MAX_DEPTH; cause = causeOf(cause))
    causes.push(describe(cause));
  return causes.length === 0 ? undefined : causes.join(" ← ");
}

function causeOf(error: unknown): unknown {
  return error instanceof Error ? error.cause : undefined;
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  return `${error.name}: ${error.message}${typeof code === "string" && !error.message.includes(code) ? ` (${code})` : ""}`;
}
