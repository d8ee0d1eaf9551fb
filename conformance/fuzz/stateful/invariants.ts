/**
 * What must hold after every run, read through the API and through the store's tables:
 * - everything settles: validations end, jobs end (no hang), on the states the model allows;
 * - each account's lists show exactly its own datasets and jobs (nothing of another account);
 * - the store holds exactly the acknowledged jobs, one per Idempotency-Key, and a model for
 *   each SUCCEEDED job only;
 * - money is conserved: the balance is the last balance set minus the charges since; the
 *   inference charges are what the answers' usage says; each SUCCEEDED job is charged once
 *   for the tokens it processed, and CANCELLED or FAILED jobs are not charged.
 */
import { costMicros } from "../../../server/store/money.ts";
import { checkDatasetAnswer, ModelMismatch, observeJob } from "./commands.ts";
import { COLLECTION, STALE_MS, TERMINAL, request, type Model, type Real } from "./model.ts";

/** Longest a run's jobs and validations may take to end once the commands are done. */
const SETTLE_MS = 120_000;
const TRAINING_RATE = "0.50";

function fail(r: Real, what: string): never {
  throw new ModelMismatch(`${r.account} (after the run): ${what}`);
}

export async function checkInvariants(m: Model, r: Real): Promise<void> {
  await restoreAccount(r);
  await settle(m, r);
  await checkLists(m, r);
  await checkStore(m, r);
  await checkMoney(m, r);
}

/**
 * Unsuspended and without a budget, so that the API can be read: waits until every server
 * has seen it (each caches the account for up to the staleness bound).
 */
async function restoreAccount(r: Real): Promise<void> {
  await r.deployment.store.accounts.update(r.account, { suspended: false, budgetMicros: null });
  const deadline = Date.now() + STALE_MS + 1_000;
  for (const [server] of r.deployment.baseUrls().entries()) {
    for (;;) {
      const answer = await request(r, {
        method: "GET",
        path: `/accounts/${r.account}/datasets`,
        label: "datasets (settling)",
        server,
      });
      if (answer.status === 200) break;
      if (Date.now() > deadline)
        fail(
          r,
          `server ${server} still refuses the account ${STALE_MS} ms after it was restored: ${answer.status} ${answer.code}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

async function settle(m: Model, r: Real): Promise<void> {
  const deadline = Date.now() + SETTLE_MS;
  for (;;) {
    let pending = 0;
    for (const [id, d] of m.datasets) {
      const answer = await request(r, {
        method: "GET",
        path: `/accounts/${r.account}/datasets/${id}?view=DATASET_VIEW_FULL`,
        label: "datasets/{d} (settling)",
      });
      if (answer.status !== 200) fail(r, `dataset ${id}: ${answer.status} ${answer.text.slice(0, 300)}`);
      checkDatasetAnswer(r, d, answer);
      if (d.versions.some((v) => v.validation === "pending")) pending++;
    }
    for (const job of m.jobs.values()) {
      const answer = await request(r, {
        method: "GET",
        path: `/accounts/${r.account}/${COLLECTION[job.type]}/${job.jobId}`,
        label: `${COLLECTION[job.type]}/{job} (settling)`,
      });
      if (answer.status !== 200) fail(r, `job ${job.jobId}: ${answer.status} ${answer.text.slice(0, 300)}`);
      observeJob(r, job, answer);
      if (!TERMINAL.has(job.seen.at(-1) as string)) pending++;
    }
    if (pending === 0) return;
    if (Date.now() > deadline) {
      const stuck = [...m.jobs.values()]
        .filter((j) => !TERMINAL.has(j.seen.at(-1) as string))
        .map((j) => `${j.jobId} (${j.seen.join(" → ")})`);
      const validating = [...m.datasets]
        .filter(([, d]) => d.versions.some((v) => v.validation === "pending"))
        .map(([id]) => id);
      fail(
        r,
        `not settled ${SETTLE_MS / 1000} s after the run (a hang): jobs ${stuck.join(", ") || "none"}; datasets validating ${validating.join(", ") || "none"}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function checkLists(m: Model, r: Real): Promise<void> {
  const datasets = await request(r, {
    method: "GET",
    path: `/accounts/${r.account}/datasets?pageSize=100`,
    label: "datasets (list)",
  });
  const listed = (datasets.body.datasets as { datasetId: string }[]).map((d) => d.datasetId).sort();
  const expected = [...m.datasets]
    .filter(([, d]) => !d.deleted)
    .map(([id]) => id)
    .sort();
  if (listed.join(",") !== expected.join(","))
    fail(r, `the dataset list is ${expected.join(",") || "empty"}, not ${listed.join(",")}`);
  for (const type of ["sft", "dpo"] as const) {
    const jobs = await request(r, {
      method: "GET",
      path: `/accounts/${r.account}/${COLLECTION[type]}?pageSize=100`,
      label: `${COLLECTION[type]} (list)`,
    });
    const names = (jobs.body[COLLECTION[type]] as { jobId: string }[]).map((j) => j.jobId).sort();
    const mine = [...m.jobs.values()]
      .filter((j) => j.type === type)
      .map((j) => j.jobId)
      .sort();
    if (names.join(",") !== mine.join(","))
      fail(r, `the ${COLLECTION[type]} list is ${mine.join(",") || "empty"}, not ${names.join(",")}`);
  }
}

async function checkStore(m: Model, r: Real): Promise<void> {
  const q = r.deployment.query;
  const jobs = await q("SELECT job_id, state, output_model_id FROM training_jobs WHERE account_id = ?", [r.account]);
  const stored = jobs.map((j) => String(j.job_id)).sort();
  const acknowledged = [...m.jobs.keys()].sort();
  if (stored.join(",") !== acknowledged.join(","))
    fail(r, `the store holds the acknowledged jobs ${acknowledged.join(",") || "(none)"}, not ${stored.join(",")}`);
  for (const row of jobs) {
    const job = m.jobs.get(String(row.job_id));
    if (job && row.state !== job.seen.at(-1))
      fail(r, `job ${job.jobId} is ${row.state} in the store but ${job.seen.at(-1)} through the API`);
  }
  const keys = await q(
    "SELECT collection, idempotency_key, COUNT(*) AS n FROM idempotency_records WHERE account_id = ? GROUP BY collection, idempotency_key",
    [r.account],
  );
  for (const key of keys)
    if (Number(key.n) !== 1) fail(r, `Idempotency-Key ${key.idempotency_key} names ${key.n} jobs`);
  if (keys.length !== m.idempotency.size)
    fail(r, `${m.idempotency.size} Idempotency-Keys were used with a created job, the store has ${keys.length}`);
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
    );
}

/**
 * Charges may reach the store a little after the call that caused them (batched usage
 * charges): the sums are read again until they agree, for at most STALE_MS plus a second.
 */
async function checkMoney(m: Model, r: Real): Promise<void> {
  const deadline = Date.now() + STALE_MS + 1_000;
  for (;;) {
    const problem = await moneyProblem(m, r);
    if (problem === undefined) return;
    if (Date.now() > deadline) fail(r, problem);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function moneyProblem(m: Model, r: Real): Promise<string | undefined> {
  const q = r.deployment.query;
  const charges = (
    await q("SELECT kind, amount_micros, at_ms FROM usage_records WHERE account_id = ?", [r.account])
  ).map((c) => ({ kind: String(c.kind), amount: Number(c.amount_micros), at: Number(c.at_ms) }));
  const sum = (kind: string) => charges.filter((c) => c.kind === kind).reduce((s, c) => s + c.amount, 0);
  if (sum("inference") !== m.inferenceMicros)
    return `inference charges ${sum("inference")} µ, but the answers' usage costs ${m.inferenceMicros} µ`;
  const succeeded = [...m.jobs.values()].filter((j) => j.seen.at(-1) === "JOB_STATE_SUCCEEDED");
  const training = charges.filter((c) => c.kind === "fine_tuning");
  const owed = succeeded.map((j) => costMicros(TRAINING_RATE, j.processedTokens)).filter((a) => a > 0);
  if (training.length !== owed.length)
    return `${training.length} fine-tuning charges for ${owed.length} SUCCEEDED jobs that processed tokens (CANCELLED and FAILED jobs are not charged)`;
  const owedSum = owed.reduce((s, a) => s + a, 0);
  if (sum("fine_tuning") !== owedSum)
    return `fine-tuning charges ${sum("fine_tuning")} µ, but the SUCCEEDED jobs processed tokens worth ${owedSum} µ`;
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
