/** The shape of a schema rule: compares two normalized schemas at the same place. */
import type { Change, Direction, Rule } from "../../model.ts";
import type { NormalSchema } from "../../schema.ts";

export interface SchemaCheckContext {
  direction: Direction;
  /** Every error code of either side's `ErrorCode`: enums of these belong to the error-code rules. */
  errorCodes: ReadonlySet<string>;
  /** Parameter values: compared as the text on the wire, not as JSON (string ⊇ number ⊇ integer). */
  wireText?: boolean;
  /** Compares two subschemas in the same direction (for applicators such as `contains`). */
  compare?(base: unknown, head: unknown): Change[];
}

export interface SchemaRuleSet {
  rules: Rule[];
  check(base: NormalSchema, head: NormalSchema, ctx: SchemaCheckContext): Change[];
}
