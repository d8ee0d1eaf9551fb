/**
 * A transcript's steps are checked against typed schemas when the file is read, not cast:
 * a wrong type in a request, a poll, a repeat or a paging spec is a TranscriptError naming
 * the file, the step and the field; a template where a value may be interpolated passes.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, test } from "vitest";
import { loadTranscript, TranscriptError } from "../../conformance/transcript.ts";

const dir = mkdtempSync(path.join(os.tmpdir(), "transcript-file-"));
mkdirSync(path.join(dir, "inference"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A one-step transcript file whose step has `step` (YAML flow text) after its request. */
function transcriptWith(name: string, request: string, step = ""): string {
  const file = path.join(dir, "inference", `${name}.yaml`);
  writeFileSync(
    file,
    [
      "title: a transcript",
      "rules: [models.list]",
      "steps:",
      `  - request: ${request}`,
      "    expect: { status: 200 }",
      ...(step === "" ? [] : [`    ${step}`]),
      "",
    ].join("\n"),
  );
  return file;
}

function rejects(file: string, message: string): void {
  assert.throws(
    () => loadTranscript(file),
    (error: unknown) => {
      assert.ok(error instanceof TranscriptError, String(error));
      assert.equal(error.message, message);
      return true;
    },
  );
}

describe("a transcript's steps", () => {
  test("a request field of the wrong type names the file, the step and the field", () => {
    const file = transcriptWith("bad-method", "{ method: [GET], path: /models }");
    // The hand check's message, which came first, is kept.
    rejects(file, `inference/bad-method (${file}): steps[0]: request needs method and path`);
    const auth = transcriptWith("bad-auth", "{ method: GET, path: /models, auth: { scheme: basic } }");
    rejects(
      auth,
      `inference/bad-auth (${auth}): steps[0]: request.auth.scheme must be one of "bearer", "x-api-key", "none"`,
    );
    const length = transcriptWith("bad-length", "{ method: POST, path: /models, declaredLength: [1] }");
    rejects(
      length,
      `inference/bad-length (${length}): steps[0]: request.declaredLength must be an integer or a string or a null`,
    );
  });

  test("a poll, a repeat or a paging spec of the wrong shape names the field", () => {
    const poll = transcriptWith(
      "bad-poll",
      "{ method: GET, path: /models }",
      "poll: { until: { status: 200 }, maxAttempts: many }",
    );
    rejects(poll, `inference/bad-poll (${poll}): steps[0]: poll.maxAttempts must match the pattern ^\\{\\{.*\\}\\}$`);
    const repeat = transcriptWith(
      "bad-repeat",
      "{ method: GET, path: /models }",
      "repeat: { count: 3, paralel: true }",
    );
    rejects(repeat, `inference/bad-repeat (${repeat}): steps[0]: repeat.paralel is not a known field`);
    const paging = transcriptWith(
      "bad-paging",
      "{ method: GET, path: /models }",
      "paginate: { items: data, until: { at: id, values: gpt } }",
    );
    rejects(paging, `inference/bad-paging (${paging}): steps[0]: paginate.until.values must be an array`);
  });

  test("templates pass where the run interpolates them", () => {
    const file = transcriptWith(
      "templated",
      '{ method: GET, path: /models, headers: "{{faults.x.headers}}" }',
      'poll: { until: { status: 200 }, maxAttempts: "{{add(settings.contextWindow, 1)}}", timeout: job }',
    );
    const [step] = loadTranscript(file).steps;
    assert.equal(step?.request.headers, "{{faults.x.headers}}");
    assert.equal(step?.poll?.maxAttempts, "{{add(settings.contextWindow, 1)}}");
  });
});
