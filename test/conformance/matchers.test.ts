/** The matchers, event-sequence patterns and templates of the transcript format. */
import assert from "node:assert/strict";
import { describe, test } from "vitest";
import { matchExpectation } from "../../conformance/checks.ts";
import type { Exchange } from "../../conformance/http.ts";
import { getPath, match } from "../../conformance/matchers.ts";
import { parseSse } from "../../conformance/sse.ts";
import { interpolate, TemplateError } from "../../conformance/template.ts";

const ok = (expected: unknown, actual: unknown) =>
  assert.deepEqual(match(expected, actual), [], `${JSON.stringify(expected)} should match ${JSON.stringify(actual)}`);
const no = (expected: unknown, actual: unknown) =>
  assert.ok(
    match(expected, actual).length > 0,
    `${JSON.stringify(expected)} should not match ${JSON.stringify(actual)}`,
  );

describe("literals", () => {
  test("JSON equality: key order does not matter, types do", () => {
    ok({ a: 1, b: [1, 2] }, { b: [1, 2], a: 1 });
    no(1, "1");
    no("false", false);
    no(null, undefined);
    no([1, 2], [1, 2, 3]);
    no([1, 2], [2, 1]);
  });

  test("objects match partially; a key expected absent must be absent", () => {
    ok({ a: 1 }, { a: 1, b: 2 });
    no({ a: 1, c: "$absent" }, { a: 1, c: 3 });
    ok({ a: 1, c: "$absent" }, { a: 1 });
    no({ a: { b: 1 } }, { a: { b: 2 } });
  });

  test("$exact and $eq refuse extra keys", () => {
    no({ $exact: { a: 1 } }, { a: 1, b: 2 });
    ok({ $exact: { a: "$integer" } }, { a: 1 });
    no({ $eq: { a: 1 } }, { a: 1, b: 2 });
    ok({ $eq: { a: [1] } }, { a: [1] });
  });

  test("$$ escapes a literal that starts with $", () => {
    ok("$$text", "$text");
    no("$$text", "anything");
  });
});

describe("keywords", () => {
  test("types", () => {
    ok("$string", "");
    no("$string", 1);
    ok("$nonEmptyString", "x");
    no("$nonEmptyString", "");
    ok("$integer", 3);
    no("$integer", 3.5);
    ok("$number", 3.5);
    ok("$boolean", false);
    no("$object", []);
    ok("$array", []);
    ok("$null", null);
    ok("$nullOrAbsent", undefined);
    no("$nullOrAbsent", 0);
    ok("$any", 0);
    no("$any", undefined);
    no("$present", undefined);
  });

  test("formats", () => {
    ok("$datetime", "2026-11-23T10:44:10.358Z");
    no("$datetime", "2026-11-23");
    no("$datetime", "yesterday");
    ok("$int64", "0");
    ok("$int64", "9223372036854775807");
    no("$int64", "01");
    no("$int64", 12);
    no("$int64", "-1");
    ok("$decimal", "0.00066");
    no("$decimal", "1e-4");
  });

  test("an unknown keyword is a transcript error, not a pass", () => no("$strng", "x"));
});

describe("operators", () => {
  test("$regex, $startsWith, $endsWith, $contains on strings", () => {
    ok({ $regex: "^req_" }, "req_1");
    no({ $regex: "^req_" }, "x");
    no({ $regex: "x" }, 1);
    ok({ $startsWith: "accounts/" }, "accounts/a");
    ok({ $endsWith: "/1" }, "v/1");
    ok({ $contains: "bc" }, "abcd");
    no({ $contains: "zz" }, "abcd");
  });

  test("$oneOf, $allOf, $not, $optional", () => {
    ok({ $oneOf: ["a", "b"] }, "b");
    no({ $oneOf: ["a", "b"] }, "c");
    ok({ $allOf: ["$string", { $regex: "^a" }] }, "ab");
    no({ $allOf: ["$string", { $regex: "^a" }] }, "b");
    ok({ $not: "a" }, "b");
    no({ $not: { $contains: { id: 1 } } }, [{ id: 1 }]);
    ok({ $optional: "$integer" }, undefined);
    no({ $optional: "$integer" }, "1");
  });

  test("comparisons, also of 64-bit integers carried as strings", () => {
    ok({ $gt: 3 }, 4);
    no({ $gt: 3 }, 3);
    ok({ $gte: 3, $lte: 3 }, 3);
    ok({ $gt: 10 }, "11");
    no({ $lt: 10 }, "x");
  });

  test("$length of arrays and strings, with a matcher", () => {
    ok({ $length: 2 }, [1, 2]);
    no({ $length: 2 }, [1]);
    ok({ $length: { $lte: 2 } }, "ab");
    no({ $length: 1 }, 5);
  });

  test("$each, $contains, $containsAll, $inOrder, $unique, $sorted", () => {
    ok({ $each: { a: 1 } }, [{ a: 1 }, { a: 1, b: 2 }]);
    no({ $each: { a: 1 } }, [{ a: 1 }, { a: 2 }]);
    ok({ $contains: { a: 2 } }, [{ a: 1 }, { a: 2 }]);
    no({ $contains: { a: 3 } }, [{ a: 1 }]);
    ok({ $containsAll: ["x", "y"] }, ["y", "z", "x"]);
    no({ $containsAll: ["x", "q"] }, ["y", "x"]);
    ok({ $inOrder: [{ id: 3 }, { id: 1 }] }, [{ id: 3 }, { id: 2 }, { id: 1 }]);
    no({ $inOrder: [{ id: 1 }, { id: 3 }] }, [{ id: 3 }, { id: 2 }, { id: 1 }]);
    ok({ $unique: "name" }, [{ name: "a" }, { name: "b" }]);
    no({ $unique: "name" }, [{ name: "a" }, { name: "b" }, { name: "a" }]);
    ok({ $sorted: { by: "createTime", order: "desc" } }, [
      { createTime: "2026-01-02T00:00:00Z" },
      { createTime: "2026-01-01T00:00:00Z" },
    ]);
    no({ $sorted: { by: "createTime", order: "desc" } }, [
      { createTime: "2026-01-01T00:00:00Z" },
      { createTime: "2026-01-02T00:00:00Z" },
    ]);
    ok({ $sorted: { by: "step", order: "asc" } }, [{ step: "9" }, { step: "10" }]);
    no({ $sorted: { by: "step", order: "asc" } }, [{ step: "10" }, { step: "9" }]);
  });

  test("$notBefore and $before on times", () => {
    ok({ $notBefore: "2026-01-01T00:00:00Z" }, "2026-01-01T00:00:00Z");
    no({ $notBefore: "2026-01-02T00:00:00Z" }, "2026-01-01T00:00:00Z");
    ok({ $before: "2026-01-02T00:00:00Z" }, "2026-01-01T00:00:00Z");
  });

  test("an unknown operator is a transcript error", () => no({ $regexp: "x" }, "x"));

  test("mismatches say where and what", () => {
    const [m] = match({ body: { error: { code: "NOT_FOUND" } } }, { body: { error: { code: "INTERNAL" } } });
    assert.equal(m?.path, "body.error.code");
    assert.equal(m?.expected, "NOT_FOUND");
    assert.equal(m?.received, "INTERNAL");
  });
});

describe("paths", () => {
  test("dots, indexes from the end, header names with dashes", () => {
    const v = { body: { a: [{ b: 1 }, { b: 2 }] }, headers: { "x-request-id": "r" } };
    assert.equal(getPath(v, "body.a[0].b"), 1);
    assert.equal(getPath(v, "body.a[-1].b"), 2);
    assert.equal(getPath(v, "headers.x-request-id"), "r");
    assert.equal(getPath(v, "body.a.length"), 2);
    assert.equal(getPath(v, "body.nope.x"), undefined);
  });
});

function sse(text: string, extra: Partial<Exchange> = {}): Exchange {
  return {
    request: { method: "POST", url: "", relativePath: "/responses", apiPath: "/responses", headers: {} },
    status: 200,
    headers: new Headers({ "content-type": "text/event-stream" }),
    text,
    json: undefined,
    isJson: false,
    events: parseSse(text),
    durationMs: 0,
    ...extra,
  };
}

describe("event sequences", () => {
  const stream = sse(["a", "d", "d", "d", "z"].map((n) => `event: ${n}\ndata: {"type":"${n}"}\n\n`).join(""));

  test("runs with + * ? and counts, JSON-aware data", () => {
    assert.deepEqual(
      matchExpectation({ stream: { events: [{ event: "a" }, { event: "d", repeat: "+" }, { event: "z" }] } }, stream),
      [],
    );
    assert.deepEqual(
      matchExpectation(
        {
          stream: {
            events: [
              { event: "a" },
              { event: "x", repeat: "*" },
              { event: "d", repeat: 3 },
              { event: "z", data: { type: "z" } },
            ],
          },
        },
        stream,
      ),
      [],
    );
    assert.ok(
      matchExpectation({ stream: { events: [{ event: "a" }, { event: "d", repeat: 2 }, { event: "z" }] } }, stream)
        .length > 0,
    );
    assert.ok(
      matchExpectation({ stream: { events: [{ event: "a" }, { event: "d", repeat: "+" }] } }, stream).length > 0,
      "the sequence must be whole",
    );
    assert.ok(
      matchExpectation(
        { stream: { events: [{ event: "a" }, { event: "d", repeat: "+" }, { event: "z", data: { type: "y" } }] } },
        stream,
      ).length > 0,
    );
  });

  test("whitespace and key order in data do not matter", () => {
    const spaced = sse('event: a\ndata: { "type" : "a",\ndata:  "n": 1 }\n\n');
    assert.deepEqual(matchExpectation({ stream: { events: [{ event: "a", data: { n: 1, type: "a" } }] } }, spaced), []);
  });

  test("includes, excludes, last, count", () => {
    assert.deepEqual(
      matchExpectation(
        { stream: { includes: [{ event: "z" }], excludes: [{ data: "[DONE]" }], last: { event: "z" }, count: 5 } },
        stream,
      ),
      [],
    );
    assert.ok(matchExpectation({ stream: { excludes: [{ event: "d" }] } }, stream).length > 0);
    assert.ok(matchExpectation({ stream: { last: { event: "d" } } }, stream).length > 0);
  });

  test("a final event not ended by a blank line is dropped, as SSE clients do", () => {
    assert.equal(parseSse('event: a\ndata: {"type":"a"}\n\nevent: z\ndata: {"type":"z"}').length, 1);
  });

  test("anyOf passes when one alternative does", () => {
    const ex = sse("", {
      status: 404,
      isJson: true,
      json: { error: { code: "NOT_FOUND", type: "not_found_error", message: "m" } },
      events: undefined,
    });
    assert.deepEqual(
      matchExpectation({ anyOf: [{ status: 400 }, { status: 404, error: { code: "NOT_FOUND" } }] }, ex),
      [],
    );
    assert.equal(
      matchExpectation({ anyOf: [{ status: 400 }, { status: 404, error: { code: "GONE" } }] }, ex).length,
      1,
    );
  });

  test("the error shorthand fills in the type decided for the status", () => {
    const ex = sse("", {
      status: 404,
      isJson: true,
      json: { error: { code: "NOT_FOUND", type: "invalid_request_error", message: "m" } },
      events: undefined,
    });
    assert.ok(
      matchExpectation({ status: 404, error: { code: "NOT_FOUND" } }, ex).some((m) => m.path === "body.error.type"),
    );
  });
});

describe("templates", () => {
  const scope = (name: string) => ({ run: "r1", n: 3, obj: { a: [1, 2] }, models: { chat: "tiny-chat" } })[name];

  test("a whole template keeps the value's type; embedded ones are text", () => {
    assert.equal(interpolate("{{n}}", scope), 3);
    assert.deepEqual(interpolate("{{obj}}", scope), { a: [1, 2] });
    assert.equal(interpolate("x-{{n}}-{{run}}", scope), "x-3-r1");
    assert.deepEqual(interpolate({ "{{run}}": ["{{obj.a[1]}}"] }, scope), { r1: [2] });
  });

  test("functions", () => {
    assert.equal(interpolate("{{repeat('a', 3)}}", scope), "aaa");
    assert.equal((interpolate("{{pad('state:RUNNING', 256)}}", scope) as string).length, 256);
    assert.equal(interpolate("{{add(n, 2)}}", scope), 5);
    assert.equal(interpolate("{{urlencode(concat('accounts/', models.chat))}}", scope), "accounts%2Ftiny-chat");
    assert.equal(interpolate("{{re('a.b')}}", scope), "a\\.b");
    assert.equal(Buffer.from(interpolate("{{base64Bytes(4)}}", scope) as string, "base64").length, 4);
  });

  test("an undefined variable is an error, never an empty string", () => {
    assert.throws(() => interpolate("{{nope}}", scope), TemplateError);
    assert.throws(() => interpolate("{{obj.b}}", scope), TemplateError);
    assert.throws(() => interpolate("{{nofn(1)}}", scope), TemplateError);
  });
});
