/**
 * Restart safety: the server is killed with SIGKILL in the middle of training and started
 * again on the same data directory. Nothing acknowledged is lost, the job resumes from its
 * last checkpoint and finishes, its curve has every step exactly once, and the new
 * process's deployment scales up before serving the model.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, test } from "vitest";
import type { TestServer } from "../../harness/test-server.ts";
import { startChildServer, type ChildServer } from "../server/child-server.ts";
import { post } from "../server/http.ts";
import { ahoyRows, call, createSftJob, readyDataset, waitFor, waitForJob, type Caller } from "./fixtures.ts";

const dataDir = mkdtempSync(path.join(os.tmpdir(), "restart-test-"));
let child: ChildServer | undefined;
afterAll(async () => {
  await child?.stop().catch(() => undefined);
  rmSync(dataDir, { recursive: true, force: true });
});

function caller(server: ChildServer): Caller {
  return { server: server as unknown as TestServer, account: "acme", key: server.keys.acme as string };
}

test("killed mid-training, restarted: the job resumes from its checkpoint and succeeds; nothing is lost", async () => {
  const env = { JOB_LEASE_MS: "1500" };
  child = await startChildServer(dataDir, env);
  let acme = caller(child);
  const data = await readyDataset(acme, "ahoy", ahoyRows(120));
  const created = await createSftJob(acme, data, { outputModelId: "survivor", epochs: 6 });
  const jobId = created.body.jobId as string;
  // Wait until at least one checkpoint is behind it and training is under way again.
  await waitFor(async () => {
    const job = (await call(acme, "GET", `/supervisedFineTuningJobs/${jobId}`)).body;
    return job.state === "JOB_STATE_RUNNING" && job.progress.epoch >= 3 ? job : undefined;
  });
  await child.kill();

  child = await startChildServer(dataDir, env);
  acme = caller(child);
  const dataset = (await call(acme, "GET", "/datasets/ahoy")).body;
  assert.equal(dataset.state, "DATASET_STATE_READY", "the acknowledged dataset survived");
  const { job, seen } = await waitForJob(acme, "supervisedFineTuningJobs", jobId);
  assert.equal(job.state, "JOB_STATE_SUCCEEDED", JSON.stringify(job));
  assert.ok(!seen.includes("JOB_STATE_QUEUED"), "resumed, not started over from the queue");

  const curve = (await call(acme, "GET", `/supervisedFineTuningJobs/${jobId}/metrics?maxPoints=10000`)).body;
  const steps = curve.points.map((p: any) => Number(p.step));
  assert.deepEqual(
    steps,
    Array.from({ length: steps.length }, (_, i) => i + 1),
    "every step once, in order",
  );
  assert.equal(curve.points.at(-1).epoch, 6);

  // A fresh process has not loaded the adapter: its deployment scales up first.
  await child.stop();
  child = await startChildServer(dataDir, env);
  const server = child;
  const ask = () =>
    post(
      server.baseUrl,
      "/responses",
      { model: "accounts/acme/models/survivor", input: "Hello!", store: false, max_output_tokens: 8 },
      { key: server.keys.acme },
    );
  const first = await ask();
  assert.equal(first.status, 503, first.text);
  assert.equal(first.body.error.code, "DEPLOYMENT_SCALING_UP");
  assert.match(first.headers.get("retry-after") ?? "", /^\d+$/);
  const served = await waitFor(async () => {
    const result = await ask();
    return result.status === 200 ? result : undefined;
  });
  assert.equal(served.body.model, "accounts/acme/models/survivor");
});
