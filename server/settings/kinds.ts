/**
 * The kinds of value an environment setting can hold: how its text is read and, when it
 * cannot be, what it must be (the second half of the one line a bad value is refused with,
 * as fastify's build/build-validation.js names the option and its rule).
 */
import path from "node:path";

/** Returned by a kind's `read` for text it refuses. */
export const INVALID: unique symbol = Symbol("invalid setting");

export interface Kind<T> {
  /** The rule, after "NAME must be ", e.g. "a port number from 0 to 65535". */
  mustBe: string;
  read(text: string): T | typeof INVALID;
  /** The value may hold a password: a refusal does not repeat it. */
  secret?: boolean;
}

function wholeNumber(text: string): number | typeof INVALID {
  // Number("") is 0 and Number(" 1 ") is 1: only digits count as a whole number here.
  return /^\d+$/.test(text) && Number.isSafeInteger(Number(text)) ? Number(text) : INVALID;
}

export const PORT: Kind<number> = {
  mustBe: "a port number from 0 to 65535",
  read: (text) => {
    const port = wholeNumber(text);
    return port !== INVALID && port <= 65535 ? port : INVALID;
  },
};

export const AT_LEAST_ONE: Kind<number> = {
  mustBe: "a whole number of at least 1",
  read: (text) => {
    const number = wholeNumber(text);
    return number !== INVALID && number >= 1 ? number : INVALID;
  },
};

export const MILLISECONDS: Kind<number> = {
  mustBe: "a whole number of milliseconds, 0 or more",
  read: wholeNumber,
};

/** `1` on, `0` off: the two values the documentation has always named. */
export const FLAG: Kind<boolean> = {
  mustBe: "0 or 1",
  read: (text) => (text === "1" ? true : text === "0" ? false : INVALID),
};

export function oneOf<const T extends string>(values: readonly T[]): Kind<T> {
  return {
    mustBe: `one of ${values.join(", ")}`,
    read: (text) => ((values as readonly string[]).includes(text) ? (text as T) : INVALID),
  };
}

export const TEXT: Kind<string> = { mustBe: "some text", read: (text) => text };

/** A path, made absolute against the directory the process started in. */
export const DIRECTORY: Kind<string> = { mustBe: "a path", read: (text) => path.resolve(text) };

export const POSTGRES_URL: Kind<string> = {
  mustBe: "a postgres:// or postgresql:// URL",
  secret: true,
  read: (text) => {
    const protocol = URL.parse(text)?.protocol;
    return protocol === "postgres:" || protocol === "postgresql:" ? text : INVALID;
  },
};
