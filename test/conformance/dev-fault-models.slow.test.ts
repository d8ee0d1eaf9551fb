/**
 * `npm start` on the development seed offers what the `upstream` transcripts need: models
 * routed to a built-in misbehaving upstream (server/dev/fault-models.ts), which
 * conformance/profiles/reference.json names, so the documented run skips nothing. Never in
 * production, and never listed by GET /models.
 */
import assert from "node:assert/strict";
import { afterAll, beforeAll, describe, test } from "vitest";
import { loadProfile, loadTranscripts, runConformance, textReport } from "../../conformance/index.ts";
import { startServer } from "../../server/server.ts";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";
import { REFERENCE_PROFILE } from "../../harness/conformance-reference.ts";

describe("the development seed's fault models", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ devFaultModels: true });
    for (const account of ["acme", "globex"]) await server.store.accounts.update(account, { requestsPerMinute: null });
  });
  afterAll(() => server.close());

  test("the reference profile, unchanged, runs every upstream transcript and they pass", async () => {
    const profile = loadProfile(REFERENCE_PROFILE, { baseUrl: server.baseUrl });
    const report = await runConformance({ profile, areas: ["upstream"] });
    assert.equal(report.failed, 0, textReport(report));
    assert.equal(report.skipped, 0, textReport(report));
    assert.equal(report.passed, loadTranscripts().filter((t) => t.area === "upstream").length);
  });

  test("they are callable but GET /models does not list them", async () => {
    const response = await fetch(`${server.baseUrl}/models`, {
      headers: { authorization: `Bearer ${server.keys.acme}` },
    });
    const ids = ((await response.json()) as { data: { id: string }[] }).data.map((m) => m.id);
    assert.ok(ids.includes("tiny-chat"));
    assert.deepEqual(
      ids.filter((id) => id.startsWith("dev-")),
      [],
    );
  });
});

test("without the development seed's fault models, dev-upstream-faults is MODEL_NOT_FOUND", async () => {
  const server = await startTestServer();
  try {
    const response = await fetch(`${server.baseUrl}/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.keys.acme}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "dev-upstream-faults", input: "fault:429", store: false }),
    });
    assert.equal(response.status, 404);
    assert.equal(((await response.json()) as { error: { code: string } }).error.code, "MODEL_NOT_FOUND");
  } finally {
    await server.close();
  }
});

test("a production server refuses to offer them", async () => {
  const before = process.env.NODE_ENV;
  process.env.NODE_ENV = "production";
  try {
    await assert.rejects(
      startServer({
        dataDir: "/nonexistent",
        port: 0,
        host: "127.0.0.1",
        validateResponses: false,
        devSeed: false,
        devFaultModels: true,
      }),
      /NODE_ENV=production/,
    );
  } finally {
    process.env.NODE_ENV = before;
  }
});
