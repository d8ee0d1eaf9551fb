/**
 * The output ceiling is the service's promise, on every path (docs/contract-decisions.md,
 * The output ceiling): a function call of the embedded model (streamed or not, tool_choice
 * auto or named) and the output of an upstream that ignores the forwarded `max_tokens`
 * (text or a call) are cut at the ceiling, reported incomplete in each endpoint's words
 * (responses `status: incomplete`, chat and completions `finish_reason: length`, messages
 * `stop_reason: max_tokens`), and never count more than the ceiling in usage.
 */
import assert from "node:assert/strict";
import { afterAll, beforeAll, beforeEach, describe, test } from "vitest";
import { decode, encode } from "../../server/inference/tokenizer.ts";
import { startFakeUpstream, type FakeUpstream } from "./fake-upstream.ts";
import { startTestServer, type TestServer } from "../../harness/test-server.ts";
import { parseSse, post } from "./http.ts";

let local: TestServer;
let routed: TestServer;
let upstream: FakeUpstream;

const UPSTREAM_TEXT = "The upstream says hello to you, and then a great deal more than anyone asked for.";
const CALL_ARGUMENTS = '{"city":"Paris","unit":"celsius"}';
const WEATHER = "What's the weather like in Paris?";

beforeAll(async () => {
  local = await startTestServer();
  upstream = await startFakeUpstream({ kind: "stream", text: UPSTREAM_TEXT });
  routed = await startTestServer({
    routing: {
      version: "ceiling-test-1",
      providers: {
        local: { type: "local" },
        upstream: { type: "openai-compatible", baseUrl: upstream.baseUrl, model: "up", timeoutMs: 2000 },
      },
      models: { "tiny-chat": { primary: "upstream", standby: [] } },
      contentPolicy: { blockedInputTerms: [], blockedOutputTerms: [] },
    },
  });
});
afterAll(async () => {
  await local.close();
  await routed.close();
  await upstream.close();
});
beforeEach(() => {
  upstream.behaviour = { kind: "stream", text: UPSTREAM_TEXT };
});

/** What an answer came to, read the same way from each endpoint, streamed or not. */
interface Outcome {
  /** The endpoint's word for "the ceiling stopped it". */
  incomplete: boolean;
  outputTokens: number;
  calls: string[];
  text: string;
}

type Choice = "auto" | "named";

interface Endpoint {
  name: string;
  path: string;
  tools: boolean;
  body(ceiling: number, input: string, choice?: Choice): Record<string, unknown>;
  read(body: any): Outcome;
  readStream(events: any[]): Outcome;
}

const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };

const responses: Endpoint = {
  name: "responses",
  path: "/responses",
  tools: true,
  body: (ceiling, input, choice) => ({
    model: "tiny-chat",
    input,
    store: false,
    max_output_tokens: ceiling,
    ...(choice
      ? {
          tools: [{ type: "function", name: "get_weather", parameters: schema }],
          tool_choice: choice === "auto" ? "auto" : { type: "function", name: "get_weather" },
        }
      : {}),
  }),
  read: (r) => ({
    incomplete: r.status === "incomplete" && r.incomplete_details?.reason === "max_output_tokens",
    outputTokens: r.usage.output_tokens,
    calls: r.output.filter((o: any) => o.type === "function_call").map((o: any) => o.name),
    text: r.output
      .filter((o: any) => o.type === "message")
      .map((o: any) => o.content[0].text)
      .join(""),
  }),
  readStream: (events) => {
    const last = events.at(-1);
    assert.equal(last.type, "response.completed", "the stream ends with response.completed");
    const outcome = responses.read(last.response);
    const deltas = events.filter((e) => e.type === "response.output_text.delta").map((e) => e.delta);
    assert.equal(deltas.join(""), outcome.text, "the deltas are the text");
    return outcome;
  },
};

const chat: Endpoint = {
  name: "chat completions",
  path: "/chat/completions",
  tools: true,
  body: (ceiling, input, choice) => ({
    model: "tiny-chat",
    messages: [{ role: "user", content: input }],
    max_tokens: ceiling,
    stream_options: undefined,
    ...(choice
      ? {
          tools: [{ type: "function", function: { name: "get_weather", parameters: schema } }],
          tool_choice: choice === "auto" ? "auto" : { type: "function", function: { name: "get_weather" } },
        }
      : {}),
  }),
  read: (r) => ({
    incomplete: r.choices[0].finish_reason === "length",
    outputTokens: r.usage.completion_tokens,
    calls: (r.choices[0].message.tool_calls ?? []).map((c: any) => c.function.name),
    text: r.choices[0].message.content ?? "",
  }),
  readStream: (chunks) => {
    const choices = chunks.flatMap((c) => c.choices ?? []);
    return {
      incomplete: choices.some((c: any) => c.finish_reason === "length"),
      outputTokens: chunks.at(-1).usage.completion_tokens,
      calls: choices.flatMap((c: any) => c.delta?.tool_calls ?? []).flatMap((t: any) => t.function?.name ?? []),
      text: choices.map((c: any) => c.delta?.content ?? "").join(""),
    };
  },
};

const completions: Endpoint = {
  name: "completions",
  path: "/completions",
  tools: false,
  body: (ceiling, input) => ({ model: "tiny-chat", prompt: input, max_tokens: ceiling }),
  read: (r) => ({
    incomplete: r.choices[0].finish_reason === "length",
    outputTokens: r.usage.completion_tokens,
    calls: [],
    text: r.choices[0].text,
  }),
  readStream: (chunks) => {
    const choices = chunks.flatMap((c) => c.choices ?? []);
    return {
      incomplete: choices.some((c: any) => c.finish_reason === "length"),
      outputTokens: chunks.at(-1).usage.completion_tokens,
      calls: [],
      text: choices.map((c: any) => c.text ?? "").join(""),
    };
  },
};

const messages: Endpoint = {
  name: "messages",
  path: "/messages",
  tools: true,
  body: (ceiling, input, choice) => ({
    model: "tiny-chat",
    max_tokens: ceiling,
    messages: [{ role: "user", content: input }],
    ...(choice
      ? {
          tools: [{ name: "get_weather", input_schema: schema }],
          tool_choice: choice === "auto" ? { type: "auto" } : { type: "tool", name: "get_weather" },
        }
      : {}),
  }),
  read: (r) => ({
    incomplete: r.stop_reason === "max_tokens",
    outputTokens: r.usage.output_tokens,
    calls: r.content.filter((b: any) => b.type === "tool_use").map((b: any) => b.name),
    text: r.content
      .filter((b: any) => b.type === "text")
      .map((b: any) => b.text)
      .join(""),
  }),
  readStream: (events) => {
    const delta = events.find((e) => e.type === "message_delta");
    return {
      incomplete: delta.delta.stop_reason === "max_tokens",
      outputTokens: delta.usage.output_tokens,
      calls: events
        .filter((e) => e.type === "content_block_start" && e.content_block.type === "tool_use")
        .map((e) => e.content_block.name),
      text: events
        .filter((e) => e.type === "content_block_delta" && e.delta.type === "text_delta")
        .map((e) => e.delta.text)
        .join(""),
    };
  },
};

const ENDPOINTS = [responses, chat, completions, messages];

async function ask(server: TestServer, endpoint: Endpoint, body: Record<string, unknown>, stream: boolean) {
  const sent = stream
    ? {
        ...body,
        stream: true,
        ...(endpoint === chat || endpoint === completions ? { stream_options: { include_usage: true } } : {}),
      }
    : body;
  const result = await post(server.baseUrl, endpoint.path, sent, { key: server.keys.acme });
  assert.equal(result.status, 200, result.text);
  if (!stream) return endpoint.read(result.body);
  const events = parseSse(result.text)
    .filter((e) => e.json !== undefined)
    .map((e) => e.json);
  return endpoint.readStream(events);
}

describe("the embedded model's function call is cut at the ceiling", () => {
  for (const endpoint of ENDPOINTS.filter((e) => e.tools)) {
    for (const stream of [false, true]) {
      for (const choice of ["auto", "named"] as const) {
        test(`${endpoint.name}, ${stream ? "streamed" : "not streamed"}, tool_choice ${choice}: a ceiling of 1 → incomplete, no call, 1 output token`, async () => {
          const outcome = await ask(local, endpoint, endpoint.body(1, WEATHER, choice), stream);
          assert.deepEqual(outcome.calls, [], "an unfinished call is not sent");
          assert.equal(outcome.incomplete, true, JSON.stringify(outcome));
          assert.equal(outcome.outputTokens, 1);
        });
      }
      test(`${endpoint.name}, ${stream ? "streamed" : "not streamed"}: a ceiling the call fits in → the call, complete`, async () => {
        const outcome = await ask(local, endpoint, endpoint.body(64, WEATHER, "named"), stream);
        assert.deepEqual(outcome.calls, ["get_weather"]);
        assert.equal(outcome.incomplete, false);
        assert.ok(outcome.outputTokens <= 64 && outcome.outputTokens > 1, String(outcome.outputTokens));
      });
    }
  }
});

describe("chat completions' max_completion_tokens is the same ceiling on the function path", () => {
  for (const stream of [false, true]) {
    test(`${stream ? "streamed" : "not streamed"}: max_completion_tokens 1 with a named function → length, no call, 1 output token`, async () => {
      const { max_tokens: _ceiling, ...body } = chat.body(1, WEATHER, "named");
      const outcome = await ask(local, chat, { ...body, max_completion_tokens: 1 }, stream);
      assert.deepEqual(outcome.calls, []);
      assert.equal(outcome.incomplete, true, JSON.stringify(outcome));
      assert.equal(outcome.outputTokens, 1);
    });
  }
});

test("a reasoning model under a small ceiling: its summary and answer together stay within it", async () => {
  for (const stream of [false, true]) {
    const body = { ...responses.body(3, "Hello!"), model: "tiny-reasoner", reasoning: { effort: "high" } };
    const result = await post(local.baseUrl, "/responses", { ...body, stream }, { key: local.keys.acme });
    assert.equal(result.status, 200, result.text);
    const response = stream ? parseSse(result.text).at(-1)?.json.response : result.body;
    const summary = response.output.find((o: any) => o.type === "reasoning")?.summary[0]?.text ?? "";
    assert.ok(encode(summary).length <= 3, summary);
    assert.equal(response.status, "incomplete");
    assert.ok(response.usage.output_tokens <= 3, JSON.stringify(response.usage));
  }
});

describe("an upstream that ignores the forwarded max_tokens is cut at the ceiling", () => {
  const firstTwo = decode(encode(UPSTREAM_TEXT).slice(0, 2));
  for (const endpoint of ENDPOINTS) {
    for (const stream of [false, true]) {
      test(`${endpoint.name}, ${stream ? "streamed" : "not streamed"}: text past a ceiling of 2 → the first 2 tokens, incomplete, 2 output tokens`, async () => {
        const outcome = await ask(routed, endpoint, endpoint.body(2, "Hello!"), stream);
        assert.equal(outcome.text, firstTwo);
        assert.equal(outcome.incomplete, true);
        assert.equal(outcome.outputTokens, 2);
      });
    }
    if (!endpoint.tools) continue;
    for (const stream of [false, true]) {
      for (const choice of ["auto", "named"] as const) {
        test(`${endpoint.name}, ${stream ? "streamed" : "not streamed"}, tool_choice ${choice}: a call past a ceiling of 2 → no call, incomplete`, async () => {
          upstream.behaviour = { kind: "tool_call", name: "get_weather", arguments: CALL_ARGUMENTS };
          const outcome = await ask(routed, endpoint, endpoint.body(2, WEATHER, choice), stream);
          assert.deepEqual(outcome.calls, []);
          assert.equal(outcome.incomplete, true);
          assert.equal(outcome.outputTokens, 2);
        });
      }
      test(`${endpoint.name}, ${stream ? "streamed" : "not streamed"}: an upstream call within the ceiling passes whole, complete`, async () => {
        upstream.behaviour = { kind: "tool_call", name: "get_weather", arguments: CALL_ARGUMENTS };
        const outcome = await ask(routed, endpoint, endpoint.body(64, WEATHER, "named"), stream);
        assert.deepEqual(outcome.calls, ["get_weather"]);
        assert.equal(outcome.incomplete, false);
      });
    }
  }

  test("an upstream answer within the ceiling passes whole, complete", async () => {
    const outcome = await ask(routed, responses, responses.body(100, "Hello!"), false);
    assert.equal(outcome.text, UPSTREAM_TEXT);
    assert.equal(outcome.incomplete, false);
  });
});

/**
 * POST /responses marks the item the ceiling cut `incomplete`, as the OpenAI Responses API
 * does; the items it did not cut stay `completed`. The JSON answer, each
 * `response.output_item.done` and the final `response.completed` say the same.
 */
describe("responses: the output item the ceiling cut is incomplete", () => {
  /** Each item of the answer as `type status`, and for a stream the items of its output_item.done events too. */
  async function items(server: TestServer, body: Record<string, unknown>, stream: boolean) {
    const result = await post(server.baseUrl, "/responses", { ...body, stream }, { key: server.keys.acme });
    assert.equal(result.status, 200, result.text);
    const label = (item: any) => `${item.type} ${item.status}`;
    if (!stream) return { status: result.body.status, output: result.body.output.map(label), done: undefined };
    const events = parseSse(result.text)
      .filter((e) => e.json !== undefined)
      .map((e) => e.json);
    const final = events.at(-1).response;
    const added = events.filter((e) => e.type === "response.output_item.added").map((e) => e.item.status);
    assert.ok(
      added.every((s) => s === "in_progress"),
      `an item is added in_progress: ${added.join(", ")}`,
    );
    const done = events.filter((e) => e.type === "response.output_item.done").map((e) => label(e.item));
    return { status: final.status, output: final.output.map(label), done };
  }

  for (const stream of [false, true]) {
    const how = stream ? "streamed" : "not streamed";

    test(`${how}: the embedded model's text cut at the ceiling → the message is incomplete`, async () => {
      const body = { ...responses.body(3, "Write a long story about a dragon."), temperature: 0 };
      const answer = await items(local, body, stream);
      assert.equal(answer.status, "incomplete");
      assert.deepEqual(answer.output, ["message incomplete"]);
      if (stream) assert.deepEqual(answer.done, ["message incomplete"]);
    });

    test(`${how}: an upstream's text cut at the ceiling → the message is incomplete`, async () => {
      const answer = await items(routed, responses.body(2, "Hello!"), stream);
      assert.equal(answer.status, "incomplete");
      assert.deepEqual(answer.output, ["message incomplete"]);
      if (stream) assert.deepEqual(answer.done, ["message incomplete"]);
    });

    test(`${how}: an upstream answer within the ceiling → the message is completed`, async () => {
      const answer = await items(routed, responses.body(100, "Hello!"), stream);
      assert.equal(answer.status, "completed");
      assert.deepEqual(answer.output, ["message completed"]);
      if (stream) assert.deepEqual(answer.done, ["message completed"]);
    });

    test(`${how}: a call within the ceiling is completed; a call past it is not sent, nothing is marked`, async () => {
      const whole = await items(local, responses.body(64, WEATHER, "named"), stream);
      assert.deepEqual(whole.output, ["function_call completed"]);
      const cut = await items(local, responses.body(1, WEATHER, "named"), stream);
      assert.equal(cut.status, "incomplete");
      assert.deepEqual(cut.output, []);
    });

    test(`${how}: a reasoning model under a small ceiling → only the last item, the one cut, is incomplete`, async () => {
      for (const effort of ["low", "high"]) {
        const body = { ...responses.body(3, "Hello!"), model: "tiny-reasoner", reasoning: { effort } };
        const answer = await items(local, body, stream);
        assert.equal(answer.status, "incomplete");
        const statuses = answer.output.map((label: string) => label.split(" ")[1]);
        assert.equal(statuses.at(-1), "incomplete", answer.output.join(", "));
        assert.ok(
          statuses.slice(0, -1).every((s: string) => s === "completed"),
          answer.output.join(", "),
        );
        if (stream) assert.deepEqual(answer.done, answer.output);
      }
    });
  }
});
