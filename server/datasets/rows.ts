/**
 * The two row formats of a dataset (docs/contract-decisions.md, Datasets): supervised rows
 * `{"messages": [...], "tools"?: [...]}` with at least one assistant message, and
 * preference rows `{"input": {"messages": [...]}, "preferred_output": [...],
 * "non_preferred_output": [...]}`. Each check returns a reason a person can act on.
 */

export type RowFormat = "SFT" | "PREFERENCE";

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
  /** 0 excludes an assistant message from the loss; 1 (the default) includes it. */
  weight?: 0 | 1;
}

export interface SftRow {
  messages: ChatMessage[];
  tools?: unknown[];
}

export interface PreferenceRow {
  input: { messages: ChatMessage[] };
  preferred_output: ChatMessage[];
  non_preferred_output: ChatMessage[];
}

export type ParsedRow = { format: "SFT"; row: SftRow } | { format: "PREFERENCE"; row: PreferenceRow };

/** A valid row comes with the top-level keys it has, so the file is parsed once. */
export type RowCheck = { ok: true; parsed: ParsedRow; keys: string[] } | { ok: false; reason: string };

const ROLES = new Set(["system", "user", "assistant"]);

/** Parses and checks one line of JSONL. */
export function checkRow(line: string): RowCheck {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    return { ok: false, reason: `not valid JSON (${(error as Error).message})` };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return { ok: false, reason: "a row must be a JSON object" };
  const row = value as Record<string, unknown>;
  const check = "messages" in row ? checkSft(row) : isPreference(row) ? checkPreference(row) : undefined;
  if (check === undefined)
    return {
      ok: false,
      reason: `a row needs "messages" (supervised) or "input", "preferred_output" and "non_preferred_output" (preference); this one has ${keyList(row)}`,
    };
  return typeof check === "string" ? { ok: false, reason: check } : { ok: true, parsed: check, keys: Object.keys(row) };
}

function isPreference(row: Record<string, unknown>): boolean {
  return "input" in row || "preferred_output" in row || "non_preferred_output" in row;
}

function keyList(row: Record<string, unknown>): string {
  const keys = Object.keys(row);
  if (keys.length === 0) return "no keys";
  const shown = keys.slice(0, 5).map((k) => JSON.stringify(clip(k)));
  return `${keys.length === 1 ? "the key" : "the keys"} ${shown.join(", ")}${keys.length > 5 ? ", …" : ""}`;
}

/** A value shown in a reason, short enough to read. */
function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

function checkSft(row: Record<string, unknown>): ParsedRow | string {
  const messages = checkMessages(row.messages, "messages");
  if (typeof messages === "string") return messages;
  if (!messages.some((m) => m.role === "assistant"))
    return '"messages" needs at least one assistant message (the answer to train on)';
  const empty = messages.findIndex((m) => m.role === "assistant" && isBlank(m.content));
  if (empty !== -1) return `"messages[${empty}].content" is empty; an assistant message needs the answer to train on`;
  if (row.tools !== undefined && !Array.isArray(row.tools)) return '"tools" must be an array';
  return { format: "SFT", row: { messages, ...(row.tools !== undefined ? { tools: row.tools as unknown[] } : {}) } };
}

function checkPreference(row: Record<string, unknown>): ParsedRow | string {
  const input = row.input;
  if (typeof input !== "object" || input === null || Array.isArray(input))
    return '"input" must be an object with "messages"';
  const prompt = checkMessages((input as Record<string, unknown>).messages, "input.messages");
  if (typeof prompt === "string") return prompt;
  if (!prompt.some((m) => m.role === "user"))
    return '"input.messages" needs at least one user message (the prompt both answers reply to)';
  const preferred = checkAnswer(row.preferred_output, "preferred_output");
  if (typeof preferred === "string") return preferred;
  const rejected = checkAnswer(row.non_preferred_output, "non_preferred_output");
  if (typeof rejected === "string") return rejected;
  if (answerText(preferred) === answerText(rejected))
    return '"preferred_output" and "non_preferred_output" are the same answer; a preference needs two different ones';
  return {
    format: "PREFERENCE",
    row: { input: { messages: prompt }, preferred_output: preferred, non_preferred_output: rejected },
  };
}

/** A preference answer: a non-empty list of assistant messages, with text. */
function checkAnswer(value: unknown, field: string): ChatMessage[] | string {
  const messages = checkMessages(value, field);
  if (typeof messages === "string") return messages;
  const other = messages.findIndex((m) => m.role !== "assistant");
  if (other !== -1) return `"${field}[${other}].role" must be "assistant"`;
  const empty = messages.findIndex((m) => isBlank(m.content));
  return empty === -1 ? messages : `"${field}[${empty}].content" is empty; an answer needs text`;
}

/** Empty or only white space: nothing to train on. */
function isBlank(text: string): boolean {
  return text.trim() === "";
}

/** An answer's text, for comparing the preferred one with the other. */
function answerText(messages: ChatMessage[]): string {
  return messages.map((m) => m.content).join("\n");
}

function checkMessages(value: unknown, field: string): ChatMessage[] | string {
  if (value === undefined) return `"${field}" is missing; it must be an array of messages`;
  if (!Array.isArray(value)) return `"${field}" must be an array of messages`;
  if (value.length === 0) return `"${field}" must not be empty`;
  for (const [i, m] of value.entries()) {
    const problem = checkMessage(m, `${field}[${i}]`);
    if (problem !== undefined) return problem;
  }
  return value as ChatMessage[];
}

function checkMessage(value: unknown, where: string): string | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return `"${where}" must be an object with "role" and "content"`;
  const m = value as Record<string, unknown>;
  if (typeof m.role !== "string" || !ROLES.has(m.role))
    return `"${where}.role" ${found(m.role)}; it must be "system", "user" or "assistant"`;
  if (typeof m.content !== "string") return `"${where}.content" ${found(m.content)}; it must be a string`;
  if (m.weight !== undefined && m.weight !== 0 && m.weight !== 1)
    return `"${where}.weight" ${found(m.weight)}; it must be 0 or 1`;
  return undefined;
}

/** What a field held, for a reason: `is "robot"`, `is missing`, `is a number`. */
function found(value: unknown): string {
  if (value === undefined) return "is missing";
  if (typeof value === "string") return `is ${JSON.stringify(clip(value))}`;
  if (value === null) return "is null";
  if (Array.isArray(value)) return "is an array";
  return typeof value === "object" ? "is an object" : `is ${JSON.stringify(value)}`;
}

/** The messages a row trains on, for token counting: the prompt and every answer. */
export function rowMessages(parsed: ParsedRow): ChatMessage[] {
  if (parsed.format === "SFT") return parsed.row.messages;
  return [...parsed.row.input.messages, ...parsed.row.preferred_output, ...parsed.row.non_preferred_output];
}
