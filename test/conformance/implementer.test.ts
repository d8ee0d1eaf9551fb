/**
 * The kit from an implementer's chair (issue 19, items 4–6), without a server: every
 * profile value a transcript uses is declared in its `requires`; a profile's unknown keys
 * and capabilities are errors naming the closest names; a selection that names or matches
 * nothing is an error; `implements` decides what runs; each broken rule is one failure
 * naming that one rule; schema problems read in plain words.
 */
import assert from "node:assert/strict";
import { describe, test } from "vitest";
import type { ErrorObject } from "ajv";
import {
  CapabilityError,
  Contract,
  groupByRule,
  implementedOperations,
  loadTranscripts,
  missingOperations,
  parseProfile,
  PROFILE_KEYS,
  ProfileError,
  profileNeeds,
  select,
  SelectionError,
} from "../../conformance/index.ts";
import { plainSchemaError } from "../../conformance/contract.ts";

const transcripts = loadTranscripts();
const contract = Contract.load();
const byId = new Map(transcripts.map((t) => [t.id, t]));

const minimal = {
  baseUrl: "http://127.0.0.1:9/v1",
  accounts: { primary: { id: "a", key: "k1" }, secondary: { id: "b", key: "k2" } },
  models: { chat: "m" },
};

describe("requires", () => {
  test("every profile value a transcript uses is declared in its requires", () => {
    const undeclared = transcripts.flatMap((t) =>
      profileNeeds(t)
        .filter((n) => !t.requires.includes(n))
        .map((n) => `${t.id}: ${n}`),
    );
    assert.deepEqual(undeclared, []);
  });

  test("every requires entry names a key a profile may have", () => {
    const known = new Set(
      Object.entries(PROFILE_KEYS).flatMap(([section, keys]) =>
        section === "top" ? [] : keys.map((k) => `${section}.${k}`),
      ),
    );
    const unknown = transcripts.flatMap((t) => t.requires.filter((r) => !known.has(r)).map((r) => `${t.id}: ${r}`));
    assert.deepEqual(unknown, []);
  });

  test("profileNeeds finds a value inside a function call and an account role in auth", () => {
    const tooLarge = byId.get("responses/request-too-large");
    assert.ok(tooLarge);
    assert.ok(profileNeeds(tooLarge).includes("settings.maxRequestBytes"));
    const suspended = byId.get("auth/suspended");
    assert.ok(suspended);
    assert.ok(profileNeeds(suspended).includes("accounts.suspended"));
  });
});

describe("the profile", () => {
  test("an unknown key is an error naming the closest one", () => {
    assert.throws(
      () => parseProfile({ ...minimal, models: { chat: "m", tols: "t" } }),
      (e: Error) =>
        e instanceof ProfileError && /unknown profile key models\.tols \(did you mean tools\?\)/.test(e.message),
    );
    assert.throws(
      () => parseProfile({ ...minimal, setings: {} }),
      /unknown profile key setings \(did you mean settings\?\)/,
    );
    assert.throws(
      () => parseProfile({ ...minimal, accounts: { ...minimal.accounts, suspeded: { id: "x", key: "y" } } }),
      /accounts\.suspeded \(did you mean suspended\?\)/,
    );
  });

  test("$ keys are comments, not unknown keys", () => {
    assert.doesNotThrow(() => parseProfile({ ...minimal, $comment: "hi", models: { chat: "m", $comment: "roles" } }));
  });

  test("implements is a non-empty list", () => {
    assert.throws(() => parseProfile({ ...minimal, implements: [] }), /implements must be a non-empty list/);
    assert.deepEqual(parseProfile({ ...minimal, implements: ["chat.completions"] }).implements, ["chat.completions"]);
  });

  test("an unknown capability is an error naming the closest ones", () => {
    assert.throws(
      () => implementedOperations(contract, ["chat.completion"]),
      (e: Error) => e instanceof CapabilityError && /did you mean chat\.completions/.test(e.message),
    );
    assert.deepEqual([...(implementedOperations(contract, ["models", "createChatCompletion"]) ?? [])].sort(), [
      "createChatCompletion",
      "getModel",
      "listModels",
    ]);
    assert.equal(implementedOperations(contract, undefined), undefined);
  });
});

describe("selecting", () => {
  test("an area that does not exist is an error, not an empty pass", () => {
    assert.throws(
      () => select(transcripts, { areas: ["chat"] }),
      (e: Error) => e instanceof SelectionError && /no area "chat"/.test(e.message) && !e.message.includes("\n"),
    );
    assert.throws(() => select(transcripts, { areas: ["respones"] }), /did you mean responses\?/);
  });

  test("a mistyped transcript gets one line with the closest names", () => {
    assert.throws(
      () => select(transcripts, { transcripts: ["responses/stream-text"] }),
      (e: Error) =>
        e instanceof SelectionError &&
        /did you mean events\/stream-text\?/.test(e.message) &&
        !e.message.includes("\n"),
    );
    assert.throws(
      () => select(transcripts, { transcripts: ["inference/chat-completion"] }),
      /did you mean inference\/chat-completions/,
    );
  });

  test("an area and a transcript that do not meet are an error", () => {
    assert.throws(() => select(transcripts, { areas: ["auth"], transcripts: ["responses/basic"] }), SelectionError);
  });
});

describe("implements", () => {
  const chatOnly = implementedOperations(contract, ["chat.completions", "models"]) as Set<string>;

  test("a chat-only implementation runs the chat and models transcripts and the unknown-path one, nothing that needs more", () => {
    const runnable = transcripts
      .filter((t) => !t.setup && missingOperations(t, byId, contract, chatOnly).length === 0)
      .map((t) => t.id);
    assert.deepEqual(runnable.sort(), [
      "errors/unknown-path",
      "inference/chat-completions",
      "inference/chat-completions-stream",
      "inference/models",
    ]);
  });

  test("a transcript using a setup needs the setup's operations too", () => {
    const datasetsOnly = implementedOperations(contract, ["datasets"]) as Set<string>;
    const idempotency = byId.get("finetune/idempotency");
    assert.ok(idempotency);
    assert.ok(
      missingOperations(idempotency, byId, contract, datasetsOnly).some((op) => op.endsWith("SupervisedFineTuningJob")),
    );
  });
});

describe("one failure per broken rule", () => {
  const rules = new Set(["headers.x-request-id", "headers.x-provider-class", "inference.chat-completions"]);

  test("the same missing header seen by the contract, the protocol check and the expectation is one failure under its header rule", () => {
    const groups = groupByRule(
      [
        {
          kind: "protocol",
          rule: "headers.x-request-id",
          message: "x-request-id is missing",
          at: "headers.x-request-id",
        },
        {
          kind: "contract",
          rule: "contract:createChatCompletion",
          message: "required header x-request-id is missing",
          at: "headers.x-request-id",
        },
        { kind: "expectation", message: "must be a non-empty string", at: "headers.x-request-id" },
        { kind: "contract", rule: "contract:createChatCompletion", message: "missing field `usage`", at: "body.usage" },
        { kind: "expectation", message: "is absent", at: "body.usage" },
        { kind: "expectation", message: "differs", at: "body.model" },
      ],
      "inference.chat-completions",
      rules,
    );
    assert.deepEqual(
      groups.map((g) => [g.rule, g.first.message, g.rest.length]),
      [
        ["headers.x-request-id", "x-request-id is missing", 0],
        ["contract:createChatCompletion", "missing field `usage`", 0],
        ["inference.chat-completions", "differs", 0],
      ],
    );
  });

  test("several problems under one rule are one failure listing the rest", () => {
    const groups = groupByRule(
      [
        {
          kind: "contract",
          rule: "contract:listModels",
          message: "missing field `created`",
          at: "body.data[0].created",
        },
        {
          kind: "contract",
          rule: "contract:listModels",
          message: "missing field `owned_by`",
          at: "body.data[0].owned_by",
        },
      ],
      "inference.models",
      rules,
    );
    assert.equal(groups.length, 1);
    assert.equal(groups[0]?.rest.length, 1);
  });
});

describe("schema problems in plain words", () => {
  const error = (keyword: string, instancePath: string, params: Record<string, unknown>): ErrorObject => ({
    keyword,
    instancePath,
    schemaPath: "#",
    params,
    message: "ajv's words",
  });

  test("unexpected, missing and mistyped fields", () => {
    assert.deepEqual(plainSchemaError(error("not", "/message", {})), {
      message: "unexpected field `message`",
      pointer: "/message",
    });
    assert.deepEqual(plainSchemaError(error("unevaluatedProperties", "", { unevaluatedProperty: "message" })), {
      message: "unexpected field `message`",
      pointer: "/message",
    });
    assert.deepEqual(plainSchemaError(error("additionalProperties", "/a", { additionalProperty: "b" })), {
      message: "unexpected field `b`",
      pointer: "/a/b",
    });
    assert.deepEqual(plainSchemaError(error("required", "/choices/0", { missingProperty: "index" })), {
      message: "missing field `index`",
      pointer: "/choices/0/index",
    });
    assert.equal(plainSchemaError(error("type", "/created", { type: "integer" })).message, "must be an integer");
    assert.equal(
      plainSchemaError(error("enum", "/object", { allowedValues: ["list"] })).message,
      'must be one of "list"',
    );
  });

  test("the contract reports an extra field on a closed object as an unexpected field", () => {
    const problems = contract.validateSchema("BadRequestError", {
      error: { message: "m", type: "invalid_request_error", code: "INVALID_REQUEST", param: null },
      message: "x",
    });
    assert.deepEqual(problems, [{ message: "unexpected field `message`", at: "body.message", received: "x" }]);
  });
});

describe("rate limits", () => {
  test("a service that keeps answering 429 is waited out within the budget, then the step fails saying so", async () => {
    const { createServer } = await import("node:http");
    const { randomUUID } = await import("node:crypto");
    const { runConformance } = await import("../../conformance/index.ts");
    let requests = 0;
    const server = createServer((_req, res) => {
      requests++;
      res.writeHead(429, {
        "content-type": "application/json",
        "x-request-id": `req_${randomUUID()}`,
        "retry-after": "1",
      });
      res.end(
        JSON.stringify({
          error: { message: "slow down", type: "rate_limit_error", code: "TENANT_RATE_LIMITED", param: null },
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as { port: number };
      const profile = parseProfile({
        ...minimal,
        baseUrl: `http://127.0.0.1:${port}/v1`,
        implements: ["models"],
        timeouts: { rateLimitWaitMs: 1500, requestMs: 5000 },
      });
      const report = await runConformance({ profile, transcripts: ["inference/models"], cleanUp: false });
      assert.equal(report.failed, 1);
      const failure = report.failures[0];
      assert.equal(failure?.rule, "kit.rate-limit-budget");
      assert.match(failure?.message ?? "", /gave up after 1 s of Retry-After/);
      assert.equal(report.failures.length, 1, "one failure, not a status mismatch besides");
      assert.equal(requests, 2, "one retry fits a budget of 1.5 s with Retry-After: 1");
    } finally {
      server.close();
    }
  });
});
