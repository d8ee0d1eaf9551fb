/**
 * The run's cleanup tells the truth. Through a proxy in front of the reference server that
 * answers the first five DELETEs of every dataset with 429 and Retry-After (not forwarded)
 * and refuses the setup's training dataset for good (500), the run's report names as left
 * only that one dataset — the others were deleted on a retry after the 429, which is no
 * "could not delete" — and the model its training setup made, which the interface cannot
 * delete. The service's own lists agree.
 */
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, test } from "vitest";
import { jsonReport, runConformance, textReport, type RunReport } from "../../conformance/index.ts";
import { startReferenceServer, type Reference } from "../../harness/conformance-reference.ts";

let ref: Reference;
let proxy: http.Server;
let report: RunReport;
const deletes = new Map<string, number>();

beforeAll(async () => {
  ref = await startReferenceServer();
  const upstream = new URL(ref.server.baseUrl);
  proxy = http.createServer((req, res) => {
    const path = req.url ?? "/";
    if (req.method === "DELETE" && /\/datasets\/[^/]+$/.test(path)) {
      const seen = (deletes.get(path) ?? 0) + 1;
      deletes.set(path, seen);
      if (/\/datasets\/sft-/.test(path)) return refuse(res, 500, "INTERNAL", "api_error");
      // Five: the transcript's own cleanup step sends a DELETE and its three retries after a 429, then the run's cleanup one more.
      if (seen <= 5) return refuse(res, 429, "TENANT_RATE_LIMITED", "rate_limit_error", { "retry-after": "1" });
    }
    const forward = http.request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const port = (proxy.address() as AddressInfo).port;
  report = await runConformance({
    profile: { ...ref.profile, baseUrl: `http://127.0.0.1:${port}/v1`, origin: `http://127.0.0.1:${port}` },
    transcripts: ["finetune/list-filter", "datasets/list-paging"],
  });
}, 180_000);
afterAll(async () => {
  proxy?.closeAllConnections();
  await new Promise((resolve) => proxy?.close(resolve));
  await ref?.close();
});

function refuse(res: http.ServerResponse, status: number, code: string, type: string, headers = {}): void {
  res.writeHead(status, {
    "content-type": "application/json",
    "x-request-id": `req_proxy${Math.random()}`,
    ...headers,
  });
  res.end(JSON.stringify({ error: { message: `refused by the test proxy (${code})`, type, code, param: null } }));
}

test("the run passed, and its datasets met 429s on DELETE", () => {
  assert.equal(report.failed, 0, textReport(report));
  assert.ok(
    [...deletes.values()].some((n) => n >= 3),
    "some DELETE was retried after two 429s",
  );
});

test("only what the service still shows is left: the refused dataset, not those a retry deleted", async () => {
  assert.equal(report.leftBehind.length, 1, report.leftBehind.join("\n"));
  assert.match(report.leftBehind[0] as string, /^accounts\/acme\/datasets\/sft-\S+ \(DELETE → 500\)$/);
  const listed = await fetch(`${ref.server.baseUrl}/accounts/acme/datasets?pageSize=200`, {
    headers: { authorization: `Bearer ${ref.server.keys.acme}` },
  });
  const names = ((await listed.json()) as { datasets: { name: string }[] }).datasets.map((d) => d.name);
  const ours = names.filter((n) => n.includes(report.runId));
  assert.deepEqual(ours, [report.leftBehind[0]?.split(" ")[0]]);
});

test("the model the run trained is reported as left, in the terminal and in JSON", () => {
  assert.equal(report.modelsLeft.length, 1);
  assert.match(report.modelsLeft[0] as string, /^accounts\/acme\/models\//);
  const text = textReport(report);
  assert.match(text, /after the cleanup 1 remain:\n {2}accounts\/acme\/datasets\/sft-/);
  assert.match(text, /Left 1 model its jobs trained \(the interface has no operation that deletes a model\)/);
  assert.doesNotMatch(text, /429/);
  const json = JSON.parse(jsonReport(report));
  assert.deepEqual(json.modelsLeft, report.modelsLeft);
  assert.deepEqual(json.leftBehind, report.leftBehind);
});
