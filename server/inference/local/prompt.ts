/**
 * From a GenerationRequest to the local model's template turns: instructions and
 * system/developer messages become system turns, function calls and outputs become
 * call/output turns, so a tool's result is in the context the model answers from.
 */
import type { FunctionTool, GenerationRequest, Turn } from "../engine.ts";
import type { TemplateTurn } from "./template.ts";
import { wordIndex } from "./tool-args.ts";

export function templateTurns(request: Pick<GenerationRequest, "instructions" | "turns">): TemplateTurn[] {
  const turns: TemplateTurn[] = [];
  if (request.instructions !== undefined && request.instructions.length > 0)
    turns.push({ role: "system", text: request.instructions });
  for (const turn of request.turns) turns.push(templateTurn(turn));
  return turns;
}

function templateTurn(turn: Turn): TemplateTurn {
  switch (turn.kind) {
    case "message":
      return { role: turn.role === "developer" ? "system" : turn.role, text: turn.text };
    case "function_call":
      return { role: "call", text: `${turn.name} ${turn.arguments}` };
    case "function_output":
      return { role: "output", text: turn.output };
  }
}

/** Text of the last user message, where tool arguments and tool mentions are looked for. */
export function lastUserText(turns: readonly Turn[]): string {
  for (let i = turns.length - 1; i >= 0; i--) {
    const t = turns[i]!;
    if (t.kind === "message" && t.role === "user") return t.text;
  }
  return "";
}

/**
 * The tool the model calls instead of answering, or null. After a function output the
 * model always answers in text (it has the result it asked for).
 *   none → never; {function, name} → that tool; required → the tool the request is about,
 *   else the first; auto → the tool the request is about, else none.
 */
export function chooseTool(request: Pick<GenerationRequest, "turns" | "tools" | "toolChoice">): FunctionTool | null {
  const last = request.turns[request.turns.length - 1];
  if (request.tools.length === 0 || last?.kind === "function_output") return null;
  const wanted = requestedTool(request.tools, lastUserText(request.turns));
  switch (request.toolChoice.mode) {
    case "none":
      return null;
    case "auto":
      return wanted;
    case "required":
      return wanted ?? request.tools[0]!;
    case "function": {
      const name = request.toolChoice.name;
      return request.tools.find((t) => t.name === name) ?? null;
    }
  }
}

/**
 * The tool a user message plainly asks for: one it names (`use get_weather`), else one
 * whose subject the message is about ("What's the weather like in Paris?" asks for
 * `get_weather`). The decision is this rule and not the model's: a two-layer model trained on
 * a few tools cannot tell from an unseen tool's name whether a question needs it, and a
 * wrong call costs the caller a round trip. The model writes the call's arguments.
 */
export function requestedTool(tools: readonly FunctionTool[], message: string): FunctionTool | null {
  const text = message.toLowerCase();
  const named = tools.find((t) => wordIndex(text, t.name.toLowerCase()) >= 0);
  if (named !== undefined) return named;
  const words = new Set(contentWords(text));
  return tools.find((t) => subjectWords(t.name).some((w) => words.has(w))) ?? null;
}

/**
 * What a tool's name is about: its words (snake, kebab or camel case) less the verbs tool
 * names begin with, which say what the tool does rather than what it is about; `get_weather`
 * → weather, `searchFlights` → flight.
 */
export function subjectWords(toolName: string): string[] {
  const words = toolName
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u);
  return words.filter((w) => w.length > 2 && !TOOL_VERBS.has(w)).map(singular);
}

const TOOL_VERBS = new Set([
  "get",
  "set",
  "list",
  "fetch",
  "find",
  "search",
  "lookup",
  "look",
  "check",
  "query",
  "read",
  "write",
  "create",
  "update",
  "delete",
  "remove",
  "add",
  "make",
  "send",
  "run",
  "call",
  "show",
  "compute",
  "calculate",
  "retrieve",
  "load",
  "save",
  "put",
  "post",
  "tool",
  "function",
  "current",
]);

function contentWords(text: string): string[] {
  return text
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 2)
    .map(singular);
}

/** Enough stemming to match `flights` with `flight` and `cities` with `city`; not a lemmatiser. */
function singular(word: string): string {
  if (word.endsWith("ies") && word.length > 4) return `${word.slice(0, -3)}y`;
  if (word.endsWith("s") && !word.endsWith("ss") && word.length > 3) return word.slice(0, -1);
  return word;
}
