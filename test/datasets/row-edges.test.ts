/**
 * Row validation at its edges (docs/contract-decisions.md, Row formats): a preference row
 * needs a user message in its prompt and two non-empty, different answers; a supervised row
 * needs non-empty assistant content; an upload with no rows fails with a reason that says
 * so and no invented line number.
 */
import assert from "node:assert/strict";
import { captureLog } from "../ops/log-capture.ts";
import { afterAll, beforeAll, describe, test } from "vitest";
import { checkRow } from "../../server/datasets/rows.ts";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";
import { createDataset, jsonl, preferenceRow, sftRow, target, uploadAndValidate, type Target } from "./helpers.ts";

const reasonOf = (row: unknown): string | undefined => {
  const check = checkRow(JSON.stringify(row));
  return check.ok ? undefined : check.reason;
};

const systemOnly = {
  input: { messages: [{ role: "system", content: "You are terse." }] },
  preferred_output: [{ role: "assistant", content: "Yes." }],
  non_preferred_output: [{ role: "assistant", content: "No." }],
};

describe("the rows themselves", () => {
  test("a preference row whose prompt is only a system message is refused: it needs a user message", () => {
    assert.match(reasonOf(systemOnly) ?? "", /"input\.messages" needs at least one user message/);
  });

  test("a preference row with an empty (or blank) preferred or non-preferred answer is refused", () => {
    assert.match(reasonOf(preferenceRow("Hi?", "", "Go away.")) ?? "", /"preferred_output\[0\]\.content" is empty/);
    assert.match(reasonOf(preferenceRow("Hi?", "  \n", "Go away.")) ?? "", /"preferred_output\[0\]\.content" is empty/);
    assert.match(reasonOf(preferenceRow("Hi?", "Hello!", "")) ?? "", /"non_preferred_output\[0\]\.content" is empty/);
  });

  test("a preference row whose two answers are the same is refused", () => {
    assert.match(reasonOf(preferenceRow("Hi?", "Hello!", "Hello!")) ?? "", /are the same answer/);
  });

  test("a supervised row with an empty assistant message is refused", () => {
    assert.match(reasonOf(sftRow("Hi?", "")) ?? "", /"messages\[1\]\.content" is empty/);
  });

  test("the ordinary rows still pass, a system message beside the user's included", () => {
    assert.equal(reasonOf(preferenceRow("Hi?", "Hello!", "Go away.")), undefined);
    const withSystem = {
      ...preferenceRow("Hi?", "Hello!", "Go away."),
      input: {
        messages: [
          { role: "system", content: "Be kind." },
          { role: "user", content: "Hi?" },
        ],
      },
    };
    assert.equal(reasonOf(withSystem), undefined);
    assert.equal(reasonOf(sftRow("Hi?", "Hello!")), undefined);
  });
});

describe("over HTTP", () => {
  let server: TestServer;
  let acme: Target;
  beforeAll(async () => {
    server = await startTestServer();
    acme = target(server);
  });
  afterAll(() => server.close());

  test("a preference upload with a system-only prompt fails at that line, saying why", async () => {
    await createDataset(acme, "system-only");
    const dataset = await uploadAndValidate(
      acme,
      "system-only",
      jsonl([preferenceRow("Hi?", "Hello!", "Go away."), systemOnly]),
    );
    assert.equal(dataset.state, "DATASET_STATE_FAILED");
    const { validation } = dataset.versions[0];
    assert.equal(validation.firstInvalidLine.lineNumber, "2");
    assert.match(validation.firstInvalidLine.reason, /^line 2: .*needs at least one user message/);
    assert.equal(validation.failureReason, undefined);
  });

  test("a preference upload with an empty preferred answer fails at that line", async () => {
    await createDataset(acme, "empty-answer");
    const dataset = await uploadAndValidate(acme, "empty-answer", jsonl([preferenceRow("Hi?", "", "Go away.")]));
    assert.equal(dataset.state, "DATASET_STATE_FAILED");
    assert.equal(dataset.versions[0].validation.firstInvalidLine.lineNumber, "1");
  });

  test("an empty upload fails with failureReason and no line number, in the answer and the log", async (t) => {
    const log = captureLog(t, { minLevel: "warn" });
    await createDataset(acme, "nothing");
    const dataset = await uploadAndValidate(acme, "nothing", "");
    assert.equal(dataset.state, "DATASET_STATE_FAILED");
    const { validation } = dataset.versions[0];
    assert.equal(validation.firstInvalidLine, undefined, JSON.stringify(validation));
    assert.match(validation.failureReason, /no rows/);
    assert.doesNotMatch(JSON.stringify(validation), /line 0/);
    const logged = log
      .entries()
      .find((e) => e.event === "dataset.validated" && String(e.version).includes("/nothing/"));
    assert.ok(logged, "the failed validation is logged");
    assert.equal(logged.firstInvalidLine, undefined, JSON.stringify(logged));
    assert.match(String(logged.failureReason), /no rows/);
  });
});
