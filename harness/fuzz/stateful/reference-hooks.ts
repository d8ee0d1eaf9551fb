/**
 * The reference server's plugins for the kit's stateful engine (conformance/fuzz/stateful,
 * `ReferenceHooks`): what needs its internals and stays out of the kit. A fresh account per
 * sequence and operator changes through the admin module (server/admin/commands.ts, as
 * `npm run admin` makes them), kill -9 of a process and its restart (deployment.ts), and
 * invariants over the store's tables after each run:
 * - the store holds exactly the acknowledged jobs, one per Idempotency-Key, and a model for
 *   each SUCCEEDED job only;
 * - money is conserved: the balance is the last balance set minus the charges since; the
 *   inference charges are what the answers' usage says; each SUCCEEDED job is charged once
 *   for the tokens it processed, each CANCELLED job once for the tokens it processed before
 *   the cancel, and FAILED or EXPIRED jobs are not charged.
 */
import { COMMANDS } from "../../../server/admin/commands.ts";
import { costMicros, formatMoney } from "../../../server/store/money.ts";
import { fail } from "../../../conformance/fuzz/stateful/invariants.ts";
import {
  INITIAL_BALANCE_MICROS,
  STALE_MS,
  type Model,
  type Real,
  type ReferenceHooks,
} from "../../../conformance/fuzz/stateful/model.ts";
import { MAX_UPLOAD_BYTES, type Deployment } from "./deployment.ts";

/** tiny-chat's price per million tokens, and its training rate (server/inference/catalog.ts). */
const BASE_PRICE = "0.10";
const TRAINING_RATE = "0.50";

let accountSerial = 0;

async function admin(
  deployment: Deployment,
  command: string,
  positionals: string[],
  options: Record<string, string | boolean> = {},
): Promise<string> {
  const run = COMMANDS[command];
  if (!run) throw new Error(`no admin command ${command}`);
  return run.run(deployment.store, { positionals, options });
}

export function referenceHooks(deployment: Deployment, options: { crashes: boolean }): ReferenceHooks {
  return {
    async newAccount() {
      const id = `sf-${process.pid}-${++accountSerial}`;
      await admin(deployment, "accounts create", [id], {
        balance: formatMoney(INITIAL_BALANCE_MICROS),
        "payment-method": true,
      });
      await admin(deployment, "limits set", [id], { rpm: "none" });
      const printed = await admin(deployment, "keys create", [], { account: id });
      return { id, key: printed.trim().split("\n").at(-1) as string };
    },
    admin: {
      suspend: async (account, on) =>
        void (await admin(deployment, on ? "accounts suspend" : "accounts unsuspend", [account])),
      setBalance: async (account, micros) =>
        void (await admin(deployment, "balance set", [account, formatMoney(micros)])),
      setBudgetZero: async (account, zero) =>
        void (await admin(deployment, "limits set", [account], { budget: zero ? "0.00" : "none" })),
      async replaceKey(account) {
        const live = (await deployment.store.apiKeys.list(account)).filter((k) => k.revokedAt === null);
        for (const key of live) await admin(deployment, "keys revoke", [key.id]);
        const printed = await admin(deployment, "keys create", [], { account });
        return printed.trim().split("\n").at(-1) as string;
      },
      restore: async (account) =>
        void (await deployment.store.accounts.update(account, { suspended: false, budgetMicros: null })),
    },
    ...(options.crashes
      ? {
          async crash(which: number) {
            const targets: (number | "worker")[] = deployment.kind === "postgres" ? [0, 1, "worker"] : [0];
            const target = targets[which % targets.length] as number | "worker";
            await deployment.crashAndRestart(target);
            return `killed and restarted ${target === "worker" ? "the worker" : `server ${target}`}`;
          },
        }
      : {}),
    async invariants(m, r) {
      await checkStore(deployment, m, r);
      await checkMoney(deployment, m, r);
    },
    diagnose: (baseUrl, path) => deployment.diagnose(baseUrl, path),
    maxUploadBytes: MAX_UPLOAD_BYTES,
  };
}

async function checkStore(deployment: Deployment, m: Model, r: Real): Promise<void> {
  const q = deployment.query;
  const jobs = await q("SELECT job_id, state, output_model_id FROM training_jobs WHERE account_id = ?", [r.account]);
  const stored = jobs.map((j) => String(j.job_id)).sort();
  const acknowledged = [...m.jobs.keys()].sort();
  if (stored.join(",") !== acknowledged.join(","))
    fail(
      r,
      `the store holds the acknowledged jobs ${acknowledged.join(",") || "(none)"}, not ${stored.join(",")}`,
      "finetune.create",
    );
  for (const row of jobs) {
    const job = m.jobs.get(String(row.job_id));
    if (job && row.state !== job.seen.at(-1))
      fail(
        r,
        `job ${job.jobId} is ${row.state} in the store but ${job.seen.at(-1)} through the API`,
        "finetune.create",
      );
  }
  const keys = await q(
    "SELECT collection, idempotency_key, COUNT(*) AS n FROM idempotency_records WHERE account_id = ? GROUP BY collection, idempotency_key",
    [r.account],
  );
  for (const key of keys)
    if (Number(key.n) !== 1) fail(r, `Idempotency-Key ${key.idempotency_key} names ${key.n} jobs`, "finetune.create");
  if (keys.length !== m.idempotency.size)
    fail(
      r,
      `${m.idempotency.size} Idempotency-Keys were used with a created job, the store has ${keys.length}`,
      "finetune.create",
    );
  const models = (await q("SELECT model_id FROM account_models WHERE account_id = ?", [r.account]))
    .map((row) => String(row.model_id))
    .sort();
  const succeeded = [...m.jobs.values()]
    .filter((j) => j.seen.at(-1) === "JOB_STATE_SUCCEEDED")
    .map((j) => j.outputModelId)
    .sort();
  if (models.join(",") !== succeeded.join(","))
    fail(
      r,
      `the account's models are those of its SUCCEEDED jobs (${succeeded.join(",") || "none"}), not ${models.join(",")}`,
      "finetune.output-model",
    );
}

/**
 * Charges may reach the store a little after the call that caused them (batched usage
 * charges): the sums are read again until they agree, for at most STALE_MS plus a second.
 */
async function checkMoney(deployment: Deployment, m: Model, r: Real): Promise<void> {
  const deadline = Date.now() + STALE_MS + 1_000;
  for (;;) {
    const problem = await moneyProblem(deployment, m, r);
    if (problem === undefined) return;
    if (Date.now() > deadline) fail(r, problem, "tenant.balance");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function moneyProblem(deployment: Deployment, m: Model, r: Real): Promise<string | undefined> {
  const q = deployment.query;
  const charges = (
    await q("SELECT kind, amount_micros, at_ms FROM usage_records WHERE account_id = ?", [r.account])
  ).map((c) => ({ kind: String(c.kind), amount: Number(c.amount_micros), at: Number(c.at_ms) }));
  const sum = (kind: string) => charges.filter((c) => c.kind === kind).reduce((s, c) => s + c.amount, 0);
  const inferenceMicros = m.inferenceTokens.reduce((s, tokens) => s + costMicros(BASE_PRICE, tokens), 0);
  if (sum("inference") !== inferenceMicros)
    return `inference charges ${sum("inference")} µ, but the answers' usage costs ${inferenceMicros} µ`;
  const billable = ["JOB_STATE_SUCCEEDED", "JOB_STATE_CANCELLED"];
  const billed = [...m.jobs.values()].filter((j) => billable.includes(j.seen.at(-1) ?? ""));
  const training = charges.filter((c) => c.kind === "fine_tuning");
  const owed = billed.map((j) => costMicros(TRAINING_RATE, j.processedTokens)).filter((a) => a > 0);
  if (training.length !== owed.length)
    return `${training.length} fine-tuning charges for ${owed.length} SUCCEEDED or CANCELLED jobs that processed tokens (FAILED and EXPIRED jobs are not charged)`;
  const owedSum = owed.reduce((s, a) => s + a, 0);
  if (sum("fine_tuning") !== owedSum)
    return `fine-tuning charges ${sum("fine_tuning")} µ, but the SUCCEEDED and CANCELLED jobs processed tokens worth ${owedSum} µ`;
  const unknown = charges.filter((c) => c.kind !== "inference" && c.kind !== "fine_tuning");
  if (unknown.length > 0) return `charges of an unknown kind: ${unknown.map((c) => c.kind).join(", ")}`;
  const [account] = await q("SELECT balance_micros FROM accounts WHERE id = ?", [r.account]);
  const balance = Number(account?.balance_micros);
  const set = m.balanceSets.at(-1) as Model["balanceSets"][number];
  // A charge made while the balance was being set may land on either side of it.
  const candidates = [set.before, set.after].map(
    (t) => set.micros - charges.filter((c) => c.at >= t).reduce((s, c) => s + c.amount, 0),
  );
  if (!candidates.includes(balance))
    return `the balance is ${balance} µ, but the last balance set (${set.micros} µ) less the charges since makes ${candidates.join(" or ")} µ`;
  return undefined;
}
