/**
 * A job's bill as the stores write it, in the transaction that ends the job (SUCCEEDED, or
 * CANCELLED for what it trained before the cancel): the tokens its progress shows at that
 * moment, at the base model's training rate, written on the job's `execution` and taken
 * from the account's balance together. So no ended job is ever seen, or left by a crash,
 * without its bill, and none is billed twice.
 */
import type { JobBill, JobRecord } from "../fine-tuning.ts";
import { costMicros } from "../money.ts";
import type { UsageCharge } from "../store.ts";

/** The job with its bill written in, and the charge to record (none for a bill of zero). */
export function withBill(job: JobRecord, bill: JobBill): { job: JobRecord; charge: UsageCharge | undefined } {
  const tokens = job.progress.processedTokens;
  const amountMicros = costMicros(bill.ratePerMillion, tokens);
  const billed: JobRecord = {
    ...job,
    execution: { ...job.execution, billedTokens: tokens, billedMicros: amountMicros },
  };
  if (amountMicros === 0) return { job: billed, charge: undefined };
  const keyId = job.createdBy.startsWith("keys/") ? job.createdBy.slice("keys/".length) : null;
  return {
    job: billed,
    charge: { accountId: job.accountId, keyId, kind: "fine_tuning", amountMicros, at: bill.at },
  };
}
