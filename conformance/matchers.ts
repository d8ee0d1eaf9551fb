/**
 * Matching a received value against a transcript's expectation. An expectation is a
 * literal (equal, JSON-aware: key order and whitespace never matter), a partial object
 * (the keys listed must match; others are the contract's business, checked by the
 * schema), an array (same length, element by element), or a matcher for what
 * legitimately differs between implementations:
 *
 *   "$any" "$present" "$absent" "$null" "$nullOrAbsent" "$string" "$nonEmptyString"
 *   "$text" "$id" "$integer" "$number" "$boolean" "$object" "$array" "$datetime"
 *   "$int64" "$decimal"                                    (a bare string)
 *   {$regex} {$oneOf: [...]} {$allOf: [...]} {$not} {$eq} {$optional}
 *   {$gt} {$gte} {$lt} {$lte} {$length} {$each} {$contains} {$containsAll}
 *   {$exact: {...}} {$startsWith} {$endsWith} {$type} {$sorted: {by, order}}
 *   {$unique: path} {$inOrder: [...]} {$notBefore: time} {$before: time}
 *
 * An object whose keys all start with `$` is a matcher; several operators in one object
 * must all hold. `"$$text"` is the literal string `"$text"`.
 */

export interface Mismatch {
  path: string;
  message: string;
  expected?: unknown;
  received?: unknown;
}

const DATETIME = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const INT64 = /^(0|[1-9][0-9]{0,18})$/;
const DECIMAL = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/;

const KEYWORDS: Record<string, (v: unknown) => string | undefined> = {
  $any: (v) => (v === undefined ? "is absent" : undefined),
  $present: (v) => (v === undefined ? "is absent" : undefined),
  $absent: (v) => (v === undefined ? undefined : "must be absent"),
  $null: (v) => (v === null ? undefined : "must be null"),
  $nullOrAbsent: (v) => (v === null || v === undefined ? undefined : "must be null or absent"),
  $string: (v) => (typeof v === "string" ? undefined : "must be a string"),
  $text: (v) => (typeof v === "string" ? undefined : "must be text (a string)"),
  $nonEmptyString: (v) => (typeof v === "string" && v.length > 0 ? undefined : "must be a non-empty string"),
  $id: (v) => (typeof v === "string" && v.length > 0 ? undefined : "must be an id (a non-empty string)"),
  $integer: (v) => (typeof v === "number" && Number.isInteger(v) ? undefined : "must be an integer"),
  $number: (v) => (typeof v === "number" && Number.isFinite(v) ? undefined : "must be a number"),
  $boolean: (v) => (typeof v === "boolean" ? undefined : "must be a boolean"),
  $object: (v) => (isPlainObject(v) ? undefined : "must be an object"),
  $array: (v) => (Array.isArray(v) ? undefined : "must be an array"),
  $datetime: (v) =>
    typeof v === "string" && DATETIME.test(v) && !Number.isNaN(Date.parse(v))
      ? undefined
      : "must be an RFC 3339 date-time",
  $int64: (v) =>
    typeof v === "string" && INT64.test(v) ? undefined : "must be a 64-bit integer carried as a decimal string",
  $decimal: (v) => (typeof v === "string" && DECIMAL.test(v) ? undefined : "must be a decimal string"),
};

export function isMatcherKeyword(value: unknown): value is string {
  return typeof value === "string" && value in KEYWORDS;
}

export function isOperatorObject(value: unknown): value is Record<string, unknown> {
  if (!isPlainObject(value)) return false;
  const keys = Object.keys(value);
  return keys.length > 0 && keys.every((k) => k.startsWith("$"));
}

/** Every way `actual` differs from `expected`; empty when it matches. */
export function match(expected: unknown, actual: unknown, path = ""): Mismatch[] {
  const out: Mismatch[] = [];
  matchInto(expected, actual, path, out);
  return out;
}

export function matches(expected: unknown, actual: unknown): boolean {
  return match(expected, actual).length === 0;
}

function fail(out: Mismatch[], path: string, message: string, expected: unknown, received: unknown): void {
  out.push({ path, message, expected, received });
}

function matchInto(expected: unknown, actual: unknown, path: string, out: Mismatch[]): void {
  if (typeof expected === "string") {
    if (expected.startsWith("$$")) return literal(expected.slice(1), actual, path, out);
    if (expected.startsWith("$")) {
      const check = KEYWORDS[expected];
      if (!check) return fail(out, path, `unknown matcher ${expected} in the transcript`, expected, actual);
      const problem = check(actual);
      if (problem) fail(out, path, problem, expected, actual);
      return;
    }
    return literal(expected, actual, path, out);
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual))
      return fail(out, path, actual === undefined ? "is absent" : "must be an array", expected, actual);
    if (actual.length !== expected.length)
      fail(out, path, `must have ${expected.length} items, has ${actual.length}`, expected, actual);
    const n = Math.min(expected.length, actual.length);
    for (let i = 0; i < n; i++) matchInto(expected[i], actual[i], `${path}[${i}]`, out);
    return;
  }
  if (isOperatorObject(expected)) return operators(expected, actual, path, out);
  if (isPlainObject(expected)) {
    if (!isPlainObject(actual))
      return fail(out, path, actual === undefined ? "is absent" : "must be an object", expected, actual);
    for (const [key, sub] of Object.entries(expected)) matchInto(sub, actual[key], join(path, key), out);
    return;
  }
  literal(expected, actual, path, out);
}

function literal(expected: unknown, actual: unknown, path: string, out: Mismatch[]): void {
  if (!deepEqual(expected, actual)) fail(out, path, actual === undefined ? "is absent" : "differs", expected, actual);
}

function operators(ops: Record<string, unknown>, actual: unknown, path: string, out: Mismatch[]): void {
  for (const [op, arg] of Object.entries(ops)) {
    switch (op) {
      case "$regex": {
        const flags = typeof ops.$flags === "string" ? ops.$flags : "";
        if (typeof actual !== "string" || !new RegExp(String(arg), flags).test(actual))
          fail(out, path, `must match /${String(arg)}/${flags}`, ops, actual);
        break;
      }
      case "$flags":
        break;
      case "$oneOf": {
        const options = asArray(arg, op);
        if (!options.some((o) => match(o, actual, path).length === 0))
          fail(out, path, "matches none of the allowed alternatives", options, actual);
        break;
      }
      case "$allOf":
        for (const o of asArray(arg, op)) matchInto(o, actual, path, out);
        break;
      case "$not":
        if (match(arg, actual, path).length === 0) fail(out, path, "must not match", { $not: arg }, actual);
        break;
      case "$eq":
        literal(arg, actual, path, out);
        break;
      case "$optional":
        if (actual !== undefined) matchInto(arg, actual, path, out);
        break;
      case "$gt":
      case "$gte":
      case "$lt":
      case "$lte": {
        const a = numeric(actual);
        const b = numeric(arg);
        const ok =
          a !== undefined &&
          b !== undefined &&
          (op === "$gt" ? a > b : op === "$gte" ? a >= b : op === "$lt" ? a < b : a <= b);
        if (!ok)
          fail(
            out,
            path,
            `must be ${{ $gt: ">", $gte: ">=", $lt: "<", $lte: "<=" }[op]} ${String(arg)}`,
            { [op]: arg },
            actual,
          );
        break;
      }
      case "$length": {
        const len = Array.isArray(actual) || typeof actual === "string" ? actual.length : undefined;
        if (len === undefined) fail(out, path, "must be an array or a string", { $length: arg }, actual);
        else {
          const sub = match(arg, len, `${path}.length`);
          if (sub.length) fail(out, path, `length ${len} does not match`, { $length: arg }, len);
        }
        break;
      }
      case "$each":
        if (!Array.isArray(actual)) fail(out, path, "must be an array", { $each: arg }, actual);
        else actual.forEach((item, i) => matchInto(arg, item, `${path}[${i}]`, out));
        break;
      case "$contains":
        if (typeof actual === "string" && typeof arg === "string") {
          if (!actual.includes(arg)) fail(out, path, `must contain ${JSON.stringify(arg)}`, { $contains: arg }, actual);
        } else if (!Array.isArray(actual)) fail(out, path, "must be an array", { $contains: arg }, actual);
        else if (!actual.some((item) => match(arg, item).length === 0))
          fail(out, path, "has no item that matches", { $contains: arg }, summarize(actual));
        break;
      case "$inOrder": {
        // Items matching each entry appear in this order (other items may come between).
        if (!Array.isArray(actual)) {
          fail(out, path, "must be an array", { $inOrder: arg }, actual);
          break;
        }
        let from = 0;
        for (const [k, want] of asArray(arg, op).entries()) {
          const at = actual.findIndex((item, i) => i >= from && match(want, item).length === 0);
          if (at < 0) {
            const anywhere = actual.findIndex((item) => match(want, item).length === 0);
            fail(
              out,
              path,
              anywhere < 0
                ? `has no item matching entry ${k} of $inOrder`
                : `entry ${k} of $inOrder is at index ${anywhere}, before entry ${k - 1}: wrong order`,
              want,
              summarize(actual),
            );
            break;
          }
          from = at + 1;
        }
        break;
      }
      case "$containsAll":
        if (!Array.isArray(actual)) fail(out, path, "must be an array", { $containsAll: arg }, actual);
        else
          for (const want of asArray(arg, op))
            if (!actual.some((item) => match(want, item).length === 0))
              fail(out, path, "has no item that matches", want, summarize(actual));
        break;
      case "$exact": {
        if (!isPlainObject(arg)) throw new Error("$exact takes an object");
        if (!isPlainObject(actual)) {
          fail(out, path, "must be an object", arg, actual);
          break;
        }
        for (const key of Object.keys(actual))
          if (!(key in arg)) fail(out, join(path, key), "is not expected here", undefined, actual[key]);
        for (const [key, sub] of Object.entries(arg)) matchInto(sub, actual[key], join(path, key), out);
        break;
      }
      case "$startsWith":
        if (typeof actual !== "string" || !actual.startsWith(String(arg)))
          fail(out, path, `must start with ${JSON.stringify(arg)}`, ops, actual);
        break;
      case "$endsWith":
        if (typeof actual !== "string" || !actual.endsWith(String(arg)))
          fail(out, path, `must end with ${JSON.stringify(arg)}`, ops, actual);
        break;
      case "$type": {
        const t =
          actual === null
            ? "null"
            : Array.isArray(actual)
              ? "array"
              : Number.isInteger(actual) && arg === "integer"
                ? "integer"
                : typeof actual;
        if (t !== arg) fail(out, path, `must be of type ${String(arg)}`, ops, actual);
        break;
      }
      case "$sorted": {
        const spec = arg as { by?: string; order?: string };
        if (!Array.isArray(actual)) {
          fail(out, path, "must be an array", ops, actual);
          break;
        }
        const keys = actual.map((item) => (spec.by ? getPath(item, spec.by) : item));
        for (let i = 1; i < keys.length; i++) {
          const c = compare(keys[i - 1], keys[i]);
          if (spec.order === "desc" ? c < 0 : c > 0) {
            fail(
              out,
              `${path}[${i}]`,
              `must be sorted ${spec.order === "desc" ? "newest/largest first" : "ascending"} by ${spec.by ?? "value"}`,
              keys[i - 1],
              keys[i],
            );
            break;
          }
        }
        break;
      }
      case "$unique": {
        if (!Array.isArray(actual)) {
          fail(out, path, "must be an array", ops, actual);
          break;
        }
        const seen = new Map<string, number>();
        actual.forEach((item, i) => {
          const key = JSON.stringify(typeof arg === "string" && arg !== "" ? getPath(item, arg) : item);
          const before = seen.get(key);
          if (before !== undefined)
            fail(
              out,
              `${path}[${i}]`,
              `repeats item ${before}${typeof arg === "string" && arg ? ` (same ${arg})` : ""}`,
              "each item once",
              key,
            );
          else seen.set(key, i);
        });
        break;
      }
      case "$notBefore":
      case "$before": {
        const a = typeof actual === "string" ? Date.parse(actual) : Number.NaN;
        const b = typeof arg === "string" ? Date.parse(arg) : Number.NaN;
        const ok = !Number.isNaN(a) && !Number.isNaN(b) && (op === "$notBefore" ? a >= b : a < b);
        if (!ok)
          fail(out, path, `must be ${op === "$notBefore" ? "at or after" : "before"} ${String(arg)}`, ops, actual);
        break;
      }
      default:
        fail(out, path, `unknown matcher ${op} in the transcript`, ops, actual);
    }
  }
}

function asArray(value: unknown, op: string): unknown[] {
  if (!Array.isArray(value)) throw new Error(`${op} takes a list`);
  return value;
}

function numeric(value: unknown): number | undefined {
  if (typeof value === "number") return value;
  if (typeof value === "string" && /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(value)) return Number(value);
  return undefined;
}

function compare(a: unknown, b: unknown): number {
  if (typeof a === "number" && typeof b === "number") return a - b;
  if (typeof a === "string" && typeof b === "string") {
    if (DATETIME.test(a) && DATETIME.test(b)) return Date.parse(a) - Date.parse(b);
    if (INT64.test(a) && INT64.test(b)) return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
    return a < b ? -1 : a > b ? 1 : 0;
  }
  return 0;
}

function summarize(items: unknown[]): unknown {
  return items.length > 5 ? [...items.slice(0, 5), `… ${items.length - 5} more`] : items;
}

function join(path: string, key: string): string {
  return path === "" ? key : /^[A-Za-z_$][\w$-]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** JSON equality: key order never matters; 1 and 1.0 are equal. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  if (isPlainObject(a)) {
    if (!isPlainObject(b)) return false;
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}

/**
 * Reads a value at a path such as `body.error.code`, `events[0].data.response.id`,
 * `items[-1]` or `headers.x-request-id`. Undefined when any step is missing.
 */
export function getPath(root: unknown, path: string): unknown {
  let value = root;
  for (const part of parsePath(path)) {
    if (typeof part === "number") value = Array.isArray(value) ? value.at(part) : undefined;
    else if (isPlainObject(value)) value = value[part];
    else if (Array.isArray(value) && part === "length") value = value.length;
    else return undefined;
  }
  return value;
}

export function parsePath(path: string): (string | number)[] {
  const parts: (string | number)[] = [];
  const re = /([^.[\]]+)|\[(-?\d+)\]|\["([^"]*)"\]/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(path))) {
    if (m[1] !== undefined) parts.push(m[1]);
    else if (m[2] !== undefined) parts.push(Number(m[2]));
    else parts.push(m[3] as string);
  }
  return parts;
}
