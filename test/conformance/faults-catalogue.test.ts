/**
 * The fault catalogue as a table (conformance/faults/catalogue.ts and catalogue/): every
 * fault cites a rule of conformance/rules.yaml and sits in the file of that rule's family,
 * every rule is broken by at least one fault or is listed below with the reason it is not,
 * and faults find the requests they act on through the contract's operations. Static: no
 * server is started (the matrix that runs the faults is faults.slow.test.ts).
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { describe, test } from "vitest";
import { FAULTS, FAULTS_BY_FAMILY } from "../../conformance/faults/catalogue.ts";
import {
  apiPath,
  collectionOf,
  isAccountScoped,
  isAtPathOf,
  isOperation,
  operationOf,
  pathParams,
} from "../../conformance/faults/operations.ts";
import type { ProxyRequest } from "../../conformance/faults/proxy.ts";
import { loadRules } from "../../conformance/index.ts";

/** Rules of rules.yaml that no fault breaks, each with the reason. */
const NOT_BROKEN: { rule: string; reason: string }[] = [
  {
    rule: "errors.rule-1",
    reason:
      "the same rule as responses.rule-2 (previous_response_id is INVALID_REQUEST), broken by responses.previous-response-id-ignored",
  },
  {
    rule: "inference.unknown-params",
    reason:
      "the same rule as errors.rule-2 (unknown parameters are ignored), broken by responses.unknown-parameter-rejected",
  },
  {
    rule: "inference.chat-completions",
    reason:
      "broken in its parts, each cited: inference.usage (chat.usage-arithmetic), inference.stream-chunks (chat.stream-id-changes), inference.stream-done (chat.done-removed)",
  },
  {
    rule: "auth.bearer",
    reason:
      "cannot be broken alone: every transcript authenticates with Bearer, so refusing it fails every call, not this rule",
  },
  {
    rule: "versioning.base-path",
    reason: "cannot be broken alone: every transcript calls under /v1, so moving the prefix fails every call",
  },
  {
    rule: "limits.declared-body-size",
    reason:
      "not expressible with the proxy: it reads a matched request's body before the fault sees it, and the kit's request declares a length it never sends (the answer must come first)",
  },
  {
    rule: "limits.job-id",
    reason:
      "broken with limits.dataset-id by limits.long-id-not-found (job and dataset paths alike), which cites that one",
  },
  { rule: "errors.unknown-path", reason: "no fault yet (an unknown path answered 405, or a wrong method 404)" },
  { rule: "errors.malformed-request", reason: "no fault yet (a wrong type or a missing field accepted)" },
  { rule: "tenant.balance", reason: "no fault yet (a call with no balance served, as tenant.allow-list-ignored does)" },
  { rule: "tenant.payment-method", reason: "no fault yet (a paid model served without a payment method)" },
  { rule: "tenant.fine-tuning-disabled", reason: "no fault yet (a job created with fine-tuning disabled)" },
  { rule: "inference.completions", reason: "no fault yet for the legacy completion format itself" },
  { rule: "inference.media", reason: "no fault yet (an image to a text-only model answered)" },
  { rule: "inference.capabilities", reason: "no fault yet (reasoning on a model that does not reason accepted)" },
  { rule: "finetune.dataset-ref", reason: "no fault yet (a dataset that is not READY accepted)" },
  { rule: "finetune.output-model-exists", reason: "no fault yet (an existing outputModelId accepted)" },
  {
    rule: "states.job.cancel-queued",
    reason: "no fault yet (the faults on cancel act on running jobs: the trainer starts a job at once)",
  },
  { rule: "limits.account-id", reason: "no fault yet (an account id over 64 characters taken as unknown)" },
  { rule: "limits.resource-name", reason: "no fault yet (a resource name over 256 characters accepted)" },
  { rule: "limits.filter", reason: "no fault yet (a filter over 256 characters accepted)" },
  { rule: "limits.page-token", reason: "no fault yet (a page token over 1024 characters taken as unknown)" },
];

const RULE_IDS = new Set(loadRules().map((rule) => rule.id));

describe("the catalogue", () => {
  test("unique ids, each fault with its rule, description, areas and a transformation", () => {
    assert.equal(new Set(FAULTS.map((f) => f.id)).size, FAULTS.length);
    for (const fault of FAULTS) {
      assert.ok(fault.rule && fault.description && fault.areas.length > 0, fault.id);
      assert.ok(fault.onRequest || fault.onResponse || fault.onEvent || fault.respond, fault.id);
    }
  });

  test("every fault cites a rule id of rules.yaml", () => {
    const unknown = FAULTS.filter((fault) => !RULE_IDS.has(fault.rule)).map((f) => `${f.id}: ${f.rule}`);
    assert.deepEqual(unknown, []);
  });

  test("each family's file holds only faults of that family's rules", () => {
    const misplaced = Object.entries(FAULTS_BY_FAMILY).flatMap(([family, faults]) =>
      faults.filter((f) => !f.rule.startsWith(`${family}.`)).map((f) => `${f.id} (${f.rule}) in ${family}`),
    );
    assert.deepEqual(misplaced, []);
  });

  test("every rule is broken by a fault, or listed as not broken with its reason", () => {
    const broken = new Set(FAULTS.map((fault) => fault.rule));
    const listed = new Set(NOT_BROKEN.map((entry) => entry.rule));
    const unlisted = [...RULE_IDS].filter((rule) => !broken.has(rule) && !listed.has(rule));
    assert.deepEqual(unlisted, [], "rules no fault breaks: write a fault, or list the rule with the reason");
    assert.deepEqual(
      NOT_BROKEN.filter((entry) => broken.has(entry.rule) || !RULE_IDS.has(entry.rule)).map((entry) => entry.rule),
      [],
      "listed as not broken, yet broken by a fault (or not a rule of rules.yaml)",
    );
    for (const entry of NOT_BROKEN) assert.ok(entry.reason.length > 0, entry.rule);
  });

  test("faults find requests through the contract's operations, not regular expressions over paths", () => {
    const dir = new URL("../../conformance/faults/catalogue/", import.meta.url);
    const pathRegexes = readdirSync(dir).flatMap((file) =>
      readFileSync(new URL(file, dir), "utf8")
        .split("\n")
        .filter((line) => /\.test\(request\.path\)|request\.path\.match\(/.test(line))
        .map((line) => `${file}: ${line.trim()}`),
    );
    assert.deepEqual(pathRegexes, []);
  });
});

describe("operation lookup", () => {
  const request = (method: string, path: string): ProxyRequest => ({
    method,
    path,
    query: new URLSearchParams(),
    headers: {},
    body: Buffer.alloc(0),
  });

  test("a request is the operation of its method and its path under the contract's base path", () => {
    assert.equal(operationOf(request("POST", "/v1/responses"))?.id, "createResponse");
    assert.equal(operationOf(request("GET", "/v1/accounts/acme/dpoJobs/j1/metrics"))?.id, "getDpoJobMetrics");
    assert.equal(operationOf(request("POST", "/v1/accounts/acme/datasets/d1:upload"))?.id, "uploadDataset");
    assert.equal(operationOf(request("GET", "/v2/models")), undefined);
    assert.equal(operationOf(request("GET", "/models")), undefined);
    assert.equal(apiPath(request("GET", "/v1/models/tiny-chat")), "/models/tiny-chat");
    assert.ok(isOperation(request("POST", "/v1/chat/completions"), "createCompletion", "createChatCompletion"));
    assert.ok(!isOperation(request("GET", "/v1/chat/completions"), "createChatCompletion"));
  });

  test("by path whatever the method, path parameters by name, collections", () => {
    assert.ok(isAtPathOf(request("GET", "/v1/messages"), "createMessage"));
    assert.ok(!isAtPathOf(request("POST", "/v1/responses"), "createMessage"));
    assert.ok(isAccountScoped(request("PUT", "/v1/accounts/acme/datasets")));
    assert.ok(!isAccountScoped(request("GET", "/v1/models")));
    assert.deepEqual(pathParams(request("POST", "/v1/accounts/acme/supervisedFineTuningJobs/j%201:cancel")), {
      account: "acme",
      job: "j 1",
    });
    assert.deepEqual(pathParams(request("GET", "/v1/accounts/acme/datasets/%zz")), { account: "acme", dataset: "%zz" });
    assert.equal(collectionOf(request("GET", "/v1/accounts/acme/dpoJobs")), "dpoJobs");
    assert.equal(collectionOf(request("POST", "/v1/accounts/acme/dpoJobs:estimateCost")), "dpoJobs");
    assert.equal(collectionOf(request("GET", "/v1/accounts/acme/datasets/d1")), "datasets");
    assert.equal(collectionOf(request("POST", "/v1/responses")), undefined);
  });
});
