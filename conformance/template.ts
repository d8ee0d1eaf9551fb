/**
 * `{{ … }}` templates in transcripts. Inside the braces: a variable path (`run`,
 * `accounts.primary.id`, `job.name`, `items[0].name`) or a function call
 * (`repeat('a', 65)`, `pad('state:RUNNING', 256)`). A string that is exactly one template
 * keeps the value's type (a number stays a number); templates inside longer strings are
 * replaced by their text.
 */

export type Scope = (name: string) => unknown;

export class TemplateError extends Error {
  override name = "TemplateError";
}

const FUNCTIONS: Record<string, (...args: unknown[]) => unknown> = {
  /** `s` repeated `n` times. */
  repeat: (s, n) => String(s).repeat(toInt(n)),
  /** `s` padded on the right with `ch` (default a space) to `n` characters. */
  pad: (s, n, ch = " ") => String(s).padEnd(toInt(n), String(ch)),
  /** `s` padded on the left with `ch` to `n` characters. */
  padStart: (s, n, ch = " ") => String(s).padStart(toInt(n), String(ch)),
  concat: (...parts) => parts.map(String).join(""),
  add: (a, b) => Number(a) + Number(b),
  sub: (a, b) => Number(a) - Number(b),
  len: (s) => (Array.isArray(s) ? s.length : String(s).length),
  urlencode: (s) => encodeURIComponent(String(s)),
  /** Base64 of `n` bytes (value 1), for inline media of a given size. */
  base64Bytes: (n) => Buffer.alloc(toInt(n), 1).toString("base64"),
  /** A regular expression matching `s` literally. */
  re: (s) => String(s).replace(/[.*+?^${}()|[\]\\/]/g, "\\$&"),
  json: (v) => JSON.stringify(v),
  str: (v) => String(v),
  num: (v) => Number(v),
  lower: (s) => String(s).toLowerCase(),
  upper: (s) => String(s).toUpperCase(),
  /** The last `/`-separated segment of a resource name. */
  last: (s) => String(s).split("/").at(-1),
};

function toInt(v: unknown): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new TemplateError(`expected a whole number, got ${JSON.stringify(v)}`);
  return n;
}

const WHOLE = /^\{\{\s*([^{}]+?)\s*\}\}$/;
const ANY = /\{\{\s*([^{}]+?)\s*\}\}/g;

/** Interpolates every string inside `value` (objects and arrays deeply; keys too). */
export function interpolate(value: unknown, scope: Scope): unknown {
  if (typeof value === "string") return interpolateString(value, scope);
  if (Array.isArray(value)) return value.map((v) => interpolate(v, scope));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[interpolateText(k, scope)] = interpolate(v, scope);
    return out;
  }
  return value;
}

export function interpolateString(text: string, scope: Scope): unknown {
  const whole = WHOLE.exec(text);
  if (whole) return evaluate(whole[1] as string, scope);
  return interpolateText(text, scope);
}

/** Interpolates and always returns text. */
export function interpolateText(text: string, scope: Scope): string {
  if (!text.includes("{{")) return text;
  return text.replace(ANY, (_, expr: string) => {
    const v = evaluate(expr, scope);
    return typeof v === "string" ? v : JSON.stringify(v);
  });
}

/** Whether a string holds a template. */
export function hasTemplate(text: string): boolean {
  return text.includes("{{");
}

// ---------------------------------------------------------------------------
// A tiny expression language: paths, literals and function calls.
// ---------------------------------------------------------------------------

export function evaluate(expr: string, scope: Scope): unknown {
  const parser = new Parser(expr, scope);
  const value = parser.expression();
  parser.end();
  return value;
}

class Parser {
  #pos = 0;
  readonly #src: string;
  readonly #scope: Scope;
  constructor(src: string, scope: Scope) {
    this.#src = src;
    this.#scope = scope;
  }

  end(): void {
    this.#ws();
    if (this.#pos < this.#src.length)
      throw new TemplateError(`unexpected "${this.#src.slice(this.#pos)}" in {{${this.#src}}}`);
  }

  expression(): unknown {
    this.#ws();
    const c = this.#src[this.#pos];
    if (c === "'" || c === '"') return this.#string(c);
    if (c !== undefined && /[-0-9]/.test(c)) return this.#number();
    const name = this.#ident();
    this.#ws();
    if (this.#src[this.#pos] === "(") {
      this.#pos++;
      const args: unknown[] = [];
      this.#ws();
      if (this.#src[this.#pos] === ")") this.#pos++;
      else {
        for (;;) {
          args.push(this.expression());
          this.#ws();
          const sep = this.#src[this.#pos++];
          if (sep === ")") break;
          if (sep !== ",") throw new TemplateError(`expected , or ) in {{${this.#src}}}`);
        }
      }
      const fn = FUNCTIONS[name];
      if (!fn) throw new TemplateError(`unknown function ${name}() in {{${this.#src}}}`);
      return fn(...args);
    }
    return this.#path(name);
  }

  #path(first: string): unknown {
    let value = this.#scope(first);
    let shown = first;
    let defined = value !== undefined;
    for (;;) {
      const c = this.#src[this.#pos];
      if (c === ".") {
        this.#pos++;
        const key = this.#ident();
        shown += `.${key}`;
        value = value !== null && typeof value === "object" ? (value as Record<string, unknown>)[key] : undefined;
      } else if (c === "[") {
        this.#pos++;
        const index = Number(this.#number());
        if (this.#src[this.#pos++] !== "]") throw new TemplateError(`expected ] in {{${this.#src}}}`);
        shown += `[${index}]`;
        value = Array.isArray(value) ? value.at(index) : undefined;
      } else break;
      defined = value !== undefined;
    }
    if (!defined)
      throw new TemplateError(`{{${shown}}} is not defined (not a variable, capture, setup export or profile value)`);
    return value;
  }

  #ident(): string {
    const m = /^[A-Za-z_$][A-Za-z0-9_$-]*/.exec(this.#src.slice(this.#pos));
    if (!m) throw new TemplateError(`expected a name at "${this.#src.slice(this.#pos)}" in {{${this.#src}}}`);
    this.#pos += m[0].length;
    return m[0];
  }

  #string(quote: string): string {
    const end = this.#src.indexOf(quote, this.#pos + 1);
    if (end < 0) throw new TemplateError(`unterminated string in {{${this.#src}}}`);
    const s = this.#src.slice(this.#pos + 1, end);
    this.#pos = end + 1;
    return s;
  }

  #number(): number {
    const m = /^-?[0-9]+(\.[0-9]+)?/.exec(this.#src.slice(this.#pos));
    if (!m) throw new TemplateError(`expected a number in {{${this.#src}}}`);
    this.#pos += m[0].length;
    return Number(m[0]);
  }

  #ws(): void {
    while (this.#src[this.#pos] === " ") this.#pos++;
  }
}
