/**
 * Both directions from one set of transcripts: the mock server serves the transcripts
 * (answering each request with the reference server's recorded answer to that step), and
 * the runner replayed against it passes — the transcripts, goldens and checks agree with
 * each other. A request no step expects is refused.
 */
import assert from "node:assert/strict";
import { afterAll, beforeAll, describe, test } from "vitest";
import { loadProfile, runConformance, startMockServer, textReport, type MockServer } from "../../conformance/index.ts";
import { CHECKPOINT_HOLD_MS, REFERENCE_PROFILE, upstreamFaultProfile } from "../../harness/conformance-reference.ts";

describe("the mock server", () => {
  let mock: MockServer;
  const profile = upstreamFaultProfile("http://127.0.0.1:9/v1");
  // The goldens were recorded on a server whose jobs stay in CHECKPOINTING (conformance record).
  profile.settings = { ...profile.settings, checkpointingMs: CHECKPOINT_HOLD_MS };
  // No golden was recorded for the request size limit's transcript: the mock has nothing to serve it.
  delete profile.settings.maxRequestBytes;
  beforeAll(async () => {
    mock = await startMockServer({ profile });
  });
  afterAll(() => mock?.close());

  test("the runner replayed against the mock passes every transcript (self-test)", async () => {
    const report = await runConformance({ profile, targetFor: mock.targetFor, cleanUp: false });
    assert.equal(report.failed, 0, textReport(report));
    // With the upstream recipes every transcript runs, but the one that needs a request size limit (not in the profile).
    assert.deepEqual(
      report.details.filter((r) => r.status === "skipped").map((r) => r.transcript),
      ["responses/request-too-large"],
    );
    assert.deepEqual(mock.unmatched, []);
  });

  test("without the recipes, the upstream transcripts are skipped, not passed", async () => {
    const plain = loadProfile(REFERENCE_PROFILE, { baseUrl: "http://127.0.0.1:9/v1" });
    plain.faults = {};
    const report = await runConformance({
      profile: plain,
      targetFor: mock.targetFor,
      areas: ["upstream", "tenant"],
      cleanUp: false,
    });
    assert.equal(report.failed, 0, textReport(report));
    assert.ok(report.details.filter((r) => r.transcript.startsWith("upstream/")).every((r) => r.status === "skipped"));
  });

  test("a client is answered step by step, with the recorded answers", async () => {
    const { baseUrl } = mock.targetFor("responses/store-required");
    const key = profile.accounts.primary.key;
    const call = (body: unknown) =>
      fetch(`${baseUrl}/responses`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const first = await call({ model: "tiny-chat", input: "Hi", max_output_tokens: 4 });
    assert.equal(first.status, 400);
    assert.equal(((await first.json()) as any).error.param, "store");
    assert.match(first.headers.get("x-request-id") ?? "", /^req_/);
  });

  describe("strictly in order (each transcript's session fresh)", () => {
    let fresh: MockServer;
    beforeAll(async () => {
      fresh = await startMockServer({ profile });
    });
    afterAll(() => fresh?.close());

    test("a request the transcript does not expect is refused with a status and code of its own and the next step", async () => {
      const { baseUrl } = fresh.targetFor("responses/no-retrieval");
      const response = await fetch(`${baseUrl}/responses/whatever`, {
        method: "PATCH",
        headers: { authorization: `Bearer ${profile.accounts.primary.key}` },
      });
      assert.equal(response.status, 422);
      const body = (await response.json()) as any;
      assert.equal(body.error.code, "MOCK_MISMATCH");
      assert.match(body.error.message, /is not step 1 of responses\/no-retrieval, which is next: POST \/v1\/responses/);
      assert.ok(body.error.differences.includes("method: expected POST, got PATCH"), body.error.message);
    });

    test("one extra field in the body is named, field by field", async () => {
      const { baseUrl } = fresh.targetFor("responses/store-required");
      const key = profile.accounts.primary.key;
      const response = await fetch(`${baseUrl}/responses`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "tiny-chat", input: "Hi", max_output_tokens: 4, extra: 1 }),
      });
      assert.equal(response.status, 422);
      const body = (await response.json()) as any;
      assert.deepEqual(body.error.differences, ["body.extra: unexpected field"]);
      assert.equal(body.error.param, "body.extra");
    });

    test("steps are matched in order: a later step is not answered before the ones before it", async () => {
      const { baseUrl } = fresh.targetFor("responses/store-required");
      const key = profile.accounts.primary.key;
      // store-required's second step sends store: true; the first (store absent) has not been made.
      const response = await fetch(`${baseUrl}/responses`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "tiny-chat", input: "Hi", max_output_tokens: 4, store: true }),
      });
      assert.equal(response.status, 422);
    });

    test("the key's scheme is part of the step: x-api-key where the transcript sends Bearer does not match", async () => {
      const { baseUrl } = fresh.targetFor("inference/models");
      const response = await fetch(`${baseUrl}/models`, { headers: { "x-api-key": profile.accounts.primary.key } });
      assert.equal(response.status, 422);
      assert.match(((await response.json()) as any).error.message, /auth: expected Authorization: Bearer/);
    });
  });

  test("answers use the profile's accounts and models, whole values only", async () => {
    const mine = upstreamFaultProfile("http://127.0.0.1:9/v1");
    mine.models = {
      ...mine.models,
      chat: "gpt-4",
      tools: "gpt-4",
      nonReasoning: "gpt-4",
      textOnly: "gpt-4",
      trainableBase: "gpt-4",
      paid: "gpt-4",
      reasoning: "o-mini",
      notTrainable: "o-mini",
      disallowed: "o-mini",
    };
    mine.accounts = { ...mine.accounts, primary: { ...mine.accounts.primary, id: "my-team" } };
    const other = await startMockServer({ profile: mine });
    try {
      const response = await fetch(`${other.targetFor("inference/models").baseUrl}/models`, {
        headers: { authorization: `Bearer ${mine.accounts.primary.key}` },
      });
      assert.equal(response.status, 200);
      const ids = ((await response.json()) as any).data.map((m: any) => m.id) as string[];
      assert.ok(ids.includes("gpt-4") && ids.includes("o-mini"), ids.join(", "));
      assert.ok(!ids.includes("tiny-chat") && !ids.includes("tiny-reasoner"), ids.join(", "));
      assert.ok(!ids.some((id) => /gpt-4-/.test(id)), `a profile value substituted inside a name: ${ids.join(", ")}`);
      assert.ok(
        ids.filter((id) => id.startsWith("accounts/")).every((id) => !id.startsWith("accounts/acme/")),
        ids.join(", "),
      );
    } finally {
      await other.close();
    }
  });

  test("a request with another account's key does not match a step made with the primary key", async () => {
    const { baseUrl } = mock.targetFor("inference/models");
    const response = await fetch(`${baseUrl}/models`, {
      headers: { authorization: `Bearer ${profile.accounts.secondary.key}` },
    });
    assert.equal(response.status, 422);
  });
});
