/**
 * What must hold after every run, read through the API:
 * - everything settles: validations end, jobs end (no hang), on the states the model allows;
 * - the lists show exactly the sequence's own datasets and jobs: on an account of its own,
 *   nothing else; on a shared account, every one of its own (ids with its prefix) and none
 *   of its own that it deleted (lists walked page by page);
 * - then the reference hook's invariants, which read the server's internals (its store's
 *   tables, its money): harness/fuzz/stateful/reference-hooks.ts.
 */
import { checkDatasetAnswer, ModelMismatch, observeJob } from "./commands.ts";
import { COLLECTION, STALE_MS, TERMINAL, request, wireId, type Model, type Real } from "./model.ts";

export function fail(r: Real, what: string, rule: string): never {
  throw new ModelMismatch(`${r.account} (after the run): ${what}`, rule);
}

export async function checkInvariants(m: Model, r: Real): Promise<void> {
  await restoreAccount(r);
  await settle(m, r);
  await checkLists(m, r);
  await r.hooks.invariants?.(m, r);
}

/**
 * Unsuspended and without a budget, so that the API can be read: waits until every server
 * has seen it (each caches the account for up to the staleness bound).
 */
async function restoreAccount(r: Real): Promise<void> {
  if (!r.hooks.admin) return;
  await r.hooks.admin.restore(r.account);
  const deadline = Date.now() + STALE_MS + 1_000;
  for (const [server] of r.baseUrls().entries()) {
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
          "auth.suspended",
        );
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

async function settle(m: Model, r: Real): Promise<void> {
  // One trainer may take the jobs one at a time: a job's time for each job still to end.
  const live = [...m.jobs.values()].filter((j) => !TERMINAL.has(j.seen.at(-1) as string)).length;
  const deadline = Date.now() + r.jobMs * Math.max(2, live);
  for (;;) {
    let pending = 0;
    for (const [id, d] of m.datasets) {
      const answer = await request(r, {
        method: "GET",
        path: `/accounts/${r.account}/datasets/${wireId(r, id)}?view=DATASET_VIEW_FULL`,
        label: "datasets/{d} (settling)",
      });
      if (answer.status !== 200)
        fail(r, `dataset ${id}: ${answer.status} ${answer.text.slice(0, 300)}`, "datasets.get");
      checkDatasetAnswer(r, d, answer);
      if (d.versions.some((v) => v.validation === "pending")) pending++;
    }
    for (const job of m.jobs.values()) {
      const answer = await request(r, {
        method: "GET",
        path: `/accounts/${r.account}/${COLLECTION[job.type]}/${job.jobId}`,
        label: `${COLLECTION[job.type]}/{job} (settling)`,
      });
      if (answer.status !== 200)
        fail(r, `job ${job.jobId}: ${answer.status} ${answer.text.slice(0, 300)}`, "finetune.get");
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
        `not settled ${(r.jobMs * Math.max(2, live)) / 1000} s after the run (a hang): jobs ${stuck.join(", ") || "none"}; datasets validating ${validating.join(", ") || "none"}`,
        "states.job.succeed",
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function checkLists(m: Model, r: Real): Promise<void> {
  const shared = r.prefix !== "";
  const datasets = await listAll(r, "datasets", "datasets (list)");
  const listed = datasets
    .map((d) => String(d.datasetId ?? ""))
    .filter((id) => id.startsWith(r.prefix))
    .map((id) => id.slice(r.prefix.length))
    .sort();
  const expected = [...m.datasets]
    .filter(([, d]) => !d.deleted)
    .map(([id]) => id)
    .sort();
  if (listed.join(",") !== expected.join(","))
    fail(r, `the dataset list is ${expected.join(",") || "empty"}, not ${listed.join(",")}`, "datasets.list");
  for (const type of ["sft", "dpo"] as const) {
    const jobs = await listAll(r, COLLECTION[type], `${COLLECTION[type]} (list)`);
    const mine = [...m.jobs.values()]
      .filter((j) => j.type === type)
      .map((j) => j.jobId)
      .sort();
    // On a shared account the list holds others' jobs too: every one of ours must be there, once.
    const names = jobs
      .map((j) => String(j.jobId ?? ""))
      .filter((id) => !shared || m.jobs.has(id))
      .sort();
    if (names.join(",") !== mine.join(","))
      fail(r, `the ${COLLECTION[type]} list is ${mine.join(",") || "empty"}, not ${names.join(",")}`, "finetune.list");
  }
}

/** Every item of a list, page by page (at most 50 pages of 100). */
async function listAll(r: Real, collection: string, label: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let token = "";
  for (let page = 0; page < 50; page++) {
    const answer = await request(r, {
      method: "GET",
      path: `/accounts/${r.account}/${collection}?pageSize=100${token ? `&pageToken=${encodeURIComponent(token)}` : ""}`,
      label,
    });
    if (answer.status !== 200)
      fail(r, `listing ${collection}: ${answer.status} ${answer.text.slice(0, 300)}`, "finetune.list");
    items.push(...((answer.body?.[collection] ?? []) as Record<string, unknown>[]));
    token = String(answer.body?.nextPageToken ?? "");
    if (!token) return items;
  }
  return items;
}
