/** The shape of a schema rule: compares two normalized schemas at the same place. */
import type { Change, Direction, Rule } from "../../model.ts";
import type { NormalSchema } from "../../schema.ts";

export interface SchemaCheckContext {
  direction: Direction;
  /** Every error code of either side's `ErrorCode`: enums of these belong to the error-code rules. */
  errorCodes: ReadonlySet<string>;
}

export interface SchemaRuleSet {
  rules: Rule[];
  check(base: NormalSchema, head: NormalSchema, ctx: SchemaCheckContext): Change[];
}
