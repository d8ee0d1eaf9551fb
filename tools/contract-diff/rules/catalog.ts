/** Every rule, for `--list-rules`, the ignore file's validation and the coverage test. */
import type { Rule } from "../model.ts";
import { SCHEMA_RULE_SETS } from "../schema-diff.ts";
import { errorCodeRules } from "./error-codes.ts";
import { headerRules } from "./headers.ts";
import { parameterRules } from "./parameters.ts";
import { pathRules } from "./paths.ts";
import { requestBodyRules } from "./request-body.ts";
import { responseRules } from "./responses.ts";
import { nullableRules } from "./schema/nullable.ts";
import { variantRules } from "./schema/variants.ts";
import { wireTextRules } from "./schema/wire-text.ts";
import { oneOfOverlapRule } from "./schema/one-of-overlap.ts";
import { deprecationRuleList } from "./deprecation.ts";
import { webhookRules } from "./webhooks.ts";
import { securityRules } from "./security.ts";
import { serverRules } from "./servers.ts";
import { sseRules } from "./sse.ts";

export const RULES: readonly Rule[] = [
  ...pathRules,
  ...parameterRules,
  ...requestBodyRules,
  ...responseRules,
  ...headerRules,
  ...sseRules,
  ...securityRules,
  ...serverRules,
  ...errorCodeRules,
  ...SCHEMA_RULE_SETS.flatMap((set) => set.rules),
  ...nullableRules,
  ...variantRules,
  ...wireTextRules,
  oneOfOverlapRule,
  ...deprecationRuleList,
  ...webhookRules,
];

const byId = new Map(RULES.map((rule) => [rule.id, rule]));
if (byId.size !== RULES.length) throw new Error("duplicate rule ids");

export function findRule(id: string): Rule | undefined {
  return byId.get(id);
}
