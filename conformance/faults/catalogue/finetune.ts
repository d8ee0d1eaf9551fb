/**
 * Faults that break the `finetune.*` rules of conformance/rules.yaml: the family is the
 * largest, so its faults are in four files, by the part of the API they break.
 */
import type { Fault } from "../proxy.ts";
import { finetuneCurveFaults } from "./finetune-curve.ts";
import { finetuneEstimateFaults } from "./finetune-estimate.ts";
import { finetuneJobFaults } from "./finetune-jobs.ts";
import { finetuneListFaults } from "./finetune-lists.ts";

export const finetuneFaults: Fault[] = [
  ...finetuneJobFaults,
  ...finetuneListFaults,
  ...finetuneCurveFaults,
  ...finetuneEstimateFaults,
];
