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
  if (request.instructions !== undefined && request.instructions.length > 0) turns.push({ role: "system", text: request.instructions });
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
 *   none → never; {function, name} → that tool; required → the tool the user mentions,
 *   else the first; auto → a tool whose name the last user message mentions as a word.
 */
export function chooseTool(request: Pick<GenerationRequest, "turns" | "tools" | "toolChoice">): FunctionTool | null {
  const last = request.turns[request.turns.length - 1];
  if (request.tools.length === 0 || last?.kind === "function_output") return null;
  const message = lastUserText(request.turns).toLowerCase();
  const mentioned = request.tools.find((t) => wordIndex(message, t.name.toLowerCase()) >= 0) ?? null;
  switch (request.toolChoice.mode) {
    case "none":
      return null;
    case "auto":
      return mentioned;
    case "required":
      return mentioned ?? request.tools[0]!;
    case "function": {
      const name = request.toolChoice.name;
      return request.tools.find((t) => t.name === name) ?? null;
    }
  }
}
