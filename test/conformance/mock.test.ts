/**
 * Both directions from one set of transcripts: the mock server serves the transcripts
 * (answering each request with the reference server's recorded answer to that step), and
 * the runner replayed against it passes — the transcripts, goldens and checks agree with
 * each other. A request no step expects is refused.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { loadProfile, runConformance, startMockServer, textReport, type MockServer } from "../../conformance/index.ts";
import { REFERENCE_PROFILE, upstreamFaultProfile } from "./reference.ts";

describe("the mock server", () => {
  let mock: MockServer;
  const profile = upstreamFaultProfile("http://127.0.0.1:9/v1");
  before(async () => {
    mock = await startMockServer({ profile });
  });
  after(() => mock?.close());

  test("the runner replayed against the mock passes every transcript (self-test)", async () => {
    const report = await runConformance({ profile, targetFor: mock.targetFor });
    assert.equal(report.failed, 0, textReport(report));
    // With the upstream recipes every transcript runs, but the one that needs a request size limit (not in the profile).
    assert.deepEqual(report.details.filter((r) => r.status === "skipped").map((r) => r.transcript), ["responses/request-too-large"]);
    assert.deepEqual(mock.unmatched, []);
  });

  test("without the recipes, the upstream transcripts are skipped, not passed", async () => {
    const plain = loadProfile(REFERENCE_PROFILE, { baseUrl: "http://127.0.0.1:9/v1" });
    const report = await runConformance({ profile: plain, targetFor: mock.targetFor, areas: ["upstream", "tenant"] });
    assert.equal(report.failed, 0, textReport(report));
    assert.ok(report.details.filter((r) => r.transcript.startsWith("upstream/")).every((r) => r.status === "skipped"));
  });

  test("a client is answered step by step, with the recorded answers", async () => {
    const { baseUrl } = mock.targetFor("responses/store-required");
    const key = profile.accounts.primary.key;
    const call = (body: unknown) => fetch(`${baseUrl}/responses`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    const first = await call({ model: "tiny-chat", input: "Hi", max_output_tokens: 4 });
    assert.equal(first.status, 400);
    assert.equal(((await first.json()) as any).error.param, "store");
    assert.match(first.headers.get("x-request-id") ?? "", /^req_/);
  });

  test("a request the transcript does not expect is refused with what it expected", async () => {
    const { baseUrl } = mock.targetFor("responses/no-retrieval");
    const response = await fetch(`${baseUrl}/responses/whatever`, { method: "PATCH", headers: { authorization: `Bearer ${profile.accounts.primary.key}` } });
    assert.equal(response.status, 404);
    const body = (await response.json()) as any;
    assert.equal(body.error.code, "NOT_FOUND");
    assert.match(body.error.message, /matches no step of responses\/no-retrieval; next expected: .*POST \/v1\/responses/);
  });

  test("a request with another account's key does not match a step made with the primary key", async () => {
    const { baseUrl } = mock.targetFor("inference/models");
    const response = await fetch(`${baseUrl}/models`, { headers: { authorization: `Bearer ${profile.accounts.secondary.key}` } });
    assert.equal(response.status, 404);
  });
});
