/**
 * What a training job is billed (docs/contract-decisions.md, Billing): the tokens actually
 * trained on. A SUCCEEDED job is billed for the tokens it trained, a CANCELLED job for the
 * tokens it trained before the cancel took effect (its `progress.processedTokens` then);
 * FAILED and EXPIRED jobs are not billed. The job's `execution` shows the bill, and the
 * account's balance moves by exactly that amount, in the same transaction.
 */
import { findPlatformModel } from "../inference/catalog.ts";
import type { JobBill, JobRecord } from "../store/fine-tuning.ts";

/**
 * The bill of a job ending now: the store writes it on the job and charges the account in
 * the transaction that ends the job (store/shared/job-bill.ts), for the tokens its
 * progress shows then.
 */
export function jobBill(job: Pick<JobRecord, "baseModel">): JobBill {
  return { ratePerMillion: findPlatformModel(job.baseModel)?.training?.ratePerMillion ?? "0", at: new Date() };
}
