/**
 * What a training job is billed (docs/contract-decisions.md, Billing): the tokens actually
 * trained on. A SUCCEEDED job is billed for the tokens it trained, a CANCELLED job for the
 * tokens it trained before the cancel took effect (its `progress.processedTokens` then);
 * FAILED and EXPIRED jobs are not billed. The job's `execution` shows the bill, and the
 * account's balance moves by exactly that amount.
 */
import { findPlatformModel } from "../inference/catalog.ts";
import type { JobExecution, JobRecord } from "../store/fine-tuning.ts";
import { costMicros } from "../store/money.ts";
import type { Store } from "../store/store.ts";

/** The job's execution with the bill for `tokens` trained written in. */
export function billedExecution(job: JobRecord, tokens: number): JobExecution {
  const rate = findPlatformModel(job.baseModel)?.training?.ratePerMillion ?? "0";
  return { ...job.execution, billedTokens: tokens, billedMicros: costMicros(rate, tokens) };
}

/** Takes the job's bill (as its execution shows it) from the account's balance. */
export async function chargeBill(store: Store, job: JobRecord): Promise<void> {
  const amountMicros = job.execution.billedMicros ?? 0;
  if (amountMicros === 0) return;
  const keyId = job.createdBy.startsWith("keys/") ? job.createdBy.slice("keys/".length) : null;
  await store.usage.charge({ accountId: job.accountId, keyId, kind: "fine_tuning", amountMicros, at: new Date() });
}
