/**
 * Faults that break the `tenant.*` rules of conformance/rules.yaml. Tenant limits and
 * permissions: allow-list, agreements, rate limit, budget.
 */
import { isAccountScoped } from "../operations.ts";
import type { Fault } from "../proxy.ts";
import { inferenceSuccess, errorCode, errorWithCode, withKey, resend } from "./support.ts";

export const tenantFaults: Fault[] = [
  {
    id: "tenant.allow-list-ignored",
    areas: ["tenant"],
    transcripts: ["tenant/allow-list"],
    rule: "tenant.allow-list",
    description: "The account's model allow-list is not enforced: the call is served.",
    async onResponse(response, request, ctx) {
      if (errorCode(response) !== "MODEL_NOT_ALLOWED") return;
      for (const key of Object.values(ctx.keys())) {
        const served = await resend(ctx, withKey(request, key));
        if (served.status === 200) return served;
      }
    },
  },
  {
    id: "tenant.agreement-not-enforced",
    areas: ["tenant"],
    transcripts: ["tenant/agreement"],
    rule: "tenant.agreement",
    description: "Licence agreements are not checked: the call is served.",
    match: inferenceSuccess,
    async onResponse(response, request, ctx) {
      if (errorCode(response) !== "AGREEMENT_REQUIRED") return;
      for (const key of Object.values(ctx.keys())) {
        const served = await resend(ctx, withKey(request, key));
        if (served.status === 200) return served;
      }
    },
  },
  {
    id: "errors.budget-code-swapped",
    areas: ["tenant", "limits", "errors"],
    transcripts: ["tenant/budget"],
    rule: "tenant.budget",
    description: "A spent budget is reported as TENANT_RATE_LIMITED (same status, type and Retry-After).",
    onResponse(response) {
      const error = errorWithCode(response, "TENANT_BUDGET_EXCEEDED");
      if (!error) return;
      error.code = "TENANT_RATE_LIMITED";
      return response;
    },
  },
  {
    id: "limits.rate-limit-not-enforced",
    areas: ["tenant", "limits"],
    transcripts: ["tenant/rate-limit"],
    rule: "tenant.rate-limit",
    description: "The per-account rate limit is not enforced: the over-limit call is served.",
    async onResponse(response, request, ctx) {
      if (errorCode(response) !== "TENANT_RATE_LIMITED" || isAccountScoped(request)) return;
      for (const key of Object.values(ctx.keys())) {
        const served = await resend(ctx, withKey(request, key));
        if (served.status < 400) return served;
      }
    },
  },
];
