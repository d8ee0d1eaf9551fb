/**
 * Faults that break the `finetune.*` rules of conformance/rules.yaml (one of four files of the
 * family, see finetune.ts). The cost estimate: its arithmetic, epochs, skipped examples, 64-bit
 * counts, and that it creates nothing.
 */
import { objectAt, valueAt } from "../json.ts";
import { isOperation, JOB_OPERATIONS } from "../operations.ts";
import type { Fault } from "../proxy.ts";
import { resend, isInt64String } from "./support.ts";

export const finetuneEstimateFaults: Fault[] = [
  {
    id: "estimate.working-from-rounded-average",
    areas: ["finetune"],
    transcripts: ["finetune/estimate"],
    rule: "finetune.estimate",
    description:
      "The working is shown from the average rounded to a whole token: tokensPerEpoch is that average × the examples, so tokensPerEpoch × epochs no longer makes tokensProcessed (the audit's 1 152 against 1 158).",
    match: (request) => isOperation(request, ...JOB_OPERATIONS.estimate),
    onResponse(response) {
      const estimate = objectAt(response.json, "estimate");
      if (response.status !== 200 || !estimate || !isInt64String(estimate.tokensPerEpoch)) return;
      const trained = Number(estimate.exampleCount) - Number(estimate.examplesSkipped);
      if (!(trained > 0)) return;
      const average = Math.round(Number(estimate.tokensPerEpoch) / trained);
      const shown = String(average * trained);
      if (shown === estimate.tokensPerEpoch) return;
      estimate.tokensPerEpoch = shown;
      estimate.avgTokensPerExample = `${average}.00`;
      return response;
    },
  },
  {
    id: "estimate.cost-arithmetic",
    areas: ["finetune"],
    rule: "finetune.estimate",
    description: "estimatedCost is computed per thousand tokens instead of per million.",
    match: (request) => isOperation(request, ...JOB_OPERATIONS.estimate),
    onResponse(response) {
      const estimate = objectAt(response.json, "estimate");
      const cost = objectAt(estimate, "estimatedCost");
      if (response.status !== 200 || !cost) return;
      const rate = Number(valueAt(estimate, "ratePerMillion", "amount"));
      const micros = (BigInt(String(estimate?.tokensProcessed)) * BigInt(Math.round(rate * 1e6))) / 1000n;
      cost.amount = `${micros / 1_000_000n}.${String(micros % 1_000_000n)
        .padStart(6, "0")
        .slice(0, 2)}`;
      return response;
    },
  },
  {
    id: "estimate.epochs-ignored",
    areas: ["finetune"],
    transcripts: ["limits/epochs"],
    rule: "finetune.estimate",
    description: "config.epochs is ignored by the estimate: it always works out one epoch.",
    match: (request) => isOperation(request, ...JOB_OPERATIONS.estimate),
    onRequest(request) {
      const config = objectAt(request.json, "config");
      if (config?.epochs === undefined || config.epochs === 1) return;
      delete config.epochs;
      return request;
    },
  },
  {
    id: "estimate.skipped-not-counted",
    areas: ["finetune"],
    transcripts: ["finetune/estimate-skips-long"],
    rule: "finetune.skip-long",
    description: 'Skipped examples are not counted: examplesSkipped is always "0".',
    match: (request) => isOperation(request, ...JOB_OPERATIONS.estimate),
    onResponse(response) {
      const estimate = objectAt(response.json, "estimate");
      if (
        response.status !== 200 ||
        !estimate ||
        estimate.examplesSkipped === undefined ||
        estimate.examplesSkipped === "0"
      )
        return;
      estimate.examplesSkipped = "0";
      return response;
    },
  },
  {
    id: "estimate.int64-as-number",
    areas: ["finetune"],
    transcripts: ["limits/eval-carveout"],
    rule: "finetune.estimate",
    description: "The estimate's counts are JSON numbers.",
    match: (request) => isOperation(request, ...JOB_OPERATIONS.estimate),
    onResponse(response) {
      const estimate = objectAt(response.json, "estimate");
      if (response.status !== 200 || !estimate) return;
      for (const field of ["exampleCount", "avgTokensPerExample", "tokensProcessed"])
        if (isInt64String(estimate[field])) estimate[field] = Number(estimate[field]);
      return response;
    },
  },
  {
    id: "estimate.creates-job",
    areas: ["finetune"],
    transcripts: ["finetune/estimate"],
    rule: "finetune.estimate",
    description: "estimateCost also creates the job it estimates.",
    match: (request) => isOperation(request, ...JOB_OPERATIONS.estimate),
    async onResponse(response, request, ctx) {
      if (response.status !== 200) return;
      const created = await resend(ctx, request, { path: request.path.replace(/:estimateCost$/, "") });
      if (created.status === 201) ctx.hit();
      return response;
    },
  },
];
