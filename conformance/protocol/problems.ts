/**
 * What every protocol check shares: the problem it reports, the recorder that numbers the
 * event a problem is at, and the received shape of an event.
 *
 * An implementation under test may send anything, so an event is never trusted to have its
 * contract type. `Received<E>` keeps the contract's field names (a check that reads a field
 * the event does not have fails to compile) and leaves every value `unknown` until the check
 * has looked at it.
 */
import type { components } from "../../generated/api.d.ts";
import { isPlainObject } from "../matchers.ts";

export type Schemas = components["schemas"];

export interface ProtocolProblem {
  /** The rule id (conformance/rules.yaml) the problem breaks. */
  rule: string;
  message: string;
  at?: string;
  expected?: unknown;
  received?: unknown;
}

/** Adds a problem at event `i` (or about the whole stream when `i` is undefined). */
export type AddProblem = (
  rule: string,
  i: number | undefined,
  message: string,
  expected?: unknown,
  received?: unknown,
) => void;

/** A recorder that appends to `problems`; `expected` and `received` are left out when undefined. */
export function problemRecorder(problems: ProtocolProblem[]): AddProblem {
  return (rule, i, message, expected, received) => {
    const p: ProtocolProblem = { rule, message, ...(i === undefined ? {} : { at: `events[${i}]` }) };
    if (expected !== undefined) p.expected = expected;
    if (received !== undefined) p.received = received;
    problems.push(p);
  };
}

/** Every field name of any member of a union. */
type FieldOf<T> = T extends unknown ? keyof T : never;

/** What an implementation sent for a value of contract type T: T's field names, values unchecked. */
export type Received<T> = { readonly [K in FieldOf<T>]?: unknown };

/** The event of type K of a stream's union, as received. */
export type ReceivedEvent<Event extends { type: string }, K extends Event["type"]> = Received<
  Extract<Event, { type: K }>
>;

/** `value` as a received T when it is an object, else undefined. */
export function received<T>(value: unknown): Received<T> | undefined {
  return isPlainObject(value) ? (value as Received<T>) : undefined;
}
