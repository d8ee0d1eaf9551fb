/**
 * The generation core over scripted providers and a real local HTTP upstream that
 * fails on purpose: routing with fallback, the rules checked before generation, and
 * the timers that watch a run.
 */
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, describe, test } from "vitest";
import { ApiError } from "../../server/api-error.ts";
import type { GenerationEvent, GenerationRequest, Provider } from "../../server/inference/engine.ts";
import { type EngineSettings, type GenerationInput, InferenceEngine } from "../../server/inference/generation.ts";
import type { Tenant } from "../../server/inference/resolved-model.ts";
import { CatalogResolver } from "../../server/inference/models.ts";
import { OpenAiUpstreamProvider } from "../../server/inference/providers/openai-upstream.ts";
import { parseRoutingConfig } from "../../server/inference/routing.ts";

const SETTINGS: EngineSettings = {
  deadlineMs: 5000,
  stallTimeoutMs: 2000,
  mediaMaxBytes: 1000,
  mediaFetchAllowList: [],
  mediaFetchTimeoutMs: 1000,
};

/** A provider that says its lines, or runs a custom script. */
function scripted(
  name: string,
  script?: (req: GenerationRequest) => AsyncIterable<GenerationEvent>,
): Provider & { calls: number } {
  const provider = {
    name,
    calls: 0,
    async *generate(req: GenerationRequest): AsyncIterable<GenerationEvent> {
      provider.calls++;
      if (script) return yield* script(req);
      yield { type: "text", delta: `from ${name}` };
      yield { type: "done", finishReason: "stop", usage: { inputTokens: 3, outputTokens: 2, reasoningTokens: 0 } };
    },
  };
  return provider;
}

const charges: number[] = [];
const tenant: Tenant = {
  accountId: "acme",
  authorizeModel: async () => undefined,
  charge: async (_model, usage) => void charges.push(usage.outputTokens),
};

function input(overrides: Partial<GenerationInput> = {}): GenerationInput {
  return {
    model: "tiny-chat",
    turns: [{ kind: "message", role: "user", text: "Hello", media: [] }],
    tools: [],
    toolChoice: { mode: "auto" },
    ...overrides,
  };
}

function engine(
  providers: Record<string, Provider>,
  route: { primary: string; standby: string[] },
  settings: Partial<EngineSettings> = {},
  policy = { blockedInputTerms: ["forbidden"], blockedOutputTerms: ["secret"] },
) {
  const routing = parseRoutingConfig({
    version: "test-7",
    providers: Object.fromEntries(Object.keys(providers).map((n) => [n, { type: "local" }])),
    models: { "tiny-chat": route, "tiny-reasoner": route },
    contentPolicy: policy,
  });
  return new InferenceEngine(routing, new Map(Object.entries(providers)), new CatalogResolver(), {
    ...SETTINGS,
    ...settings,
  });
}

async function collect(events: AsyncIterable<GenerationEvent>): Promise<GenerationEvent[]> {
  const all: GenerationEvent[] = [];
  for await (const e of events) all.push(e);
  return all;
}

async function rejectsWith(promise: Promise<unknown>, code: string, param?: string | null): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof ApiError, `expected ApiError, got ${String(error)}`);
    assert.equal(error.code, code);
    if (param !== undefined) assert.equal(error.param, param);
    return true;
  });
}

// A real HTTP upstream whose behaviour each test chooses.
let behaviour: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();
const upstream: Server = createServer((req, res) => behaviour(req, res));
await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
afterAll(() => {
  upstream.closeAllConnections();
  upstream.close();
});

function upstreamProvider(timeoutMs = 1000): OpenAiUpstreamProvider {
  return new OpenAiUpstreamProvider({
    name: "up",
    baseUrl: upstreamUrl,
    model: "upstream-model",
    timeoutMs,
    stallTimeoutMs: 1000,
  });
}

function sse(res: ServerResponse, chunks: unknown[]): void {
  res.writeHead(200, { "content-type": "text/event-stream" });
  for (const c of chunks) res.write(`data: ${JSON.stringify(c)}\n\n`);
  res.end("data: [DONE]\n\n");
}

describe("routing and fallback", () => {
  test("the primary serves when it can: x-provider-class primary, x-config-version from the routing file", async () => {
    const run = await engine({ a: scripted("a"), b: scripted("b") }, { primary: "a", standby: ["b"] }).start({
      tenant,
      input: input(),
      signal: new AbortController().signal,
    });
    assert.equal(run.providerClass, "primary");
    assert.equal(run.configVersion, "test-7");
    const events = await collect(run.events);
    assert.deepEqual(events[0], { type: "text", delta: "from a" });
  });

  test("an upstream that answers 503 moves the call to the standby (fallback)", async () => {
    behaviour = (_req, res) => res.writeHead(503).end("overloaded");
    const run = await engine({ up: upstreamProvider(), b: scripted("b") }, { primary: "up", standby: ["b"] }).start({
      tenant,
      input: input(),
      signal: new AbortController().signal,
    });
    assert.equal(run.providerClass, "fallback");
    assert.deepEqual((await collect(run.events))[0], { type: "text", delta: "from b" });
  });

  test("a refused connection moves to the standby; with none left it is 503 UPSTREAM_UNAVAILABLE", async () => {
    const closed = new OpenAiUpstreamProvider({
      name: "closed",
      baseUrl: "http://127.0.0.1:1/v1",
      model: "m",
      timeoutMs: 1000,
      stallTimeoutMs: 1000,
    });
    const run = await engine({ closed, b: scripted("b") }, { primary: "closed", standby: ["b"] }).start({
      tenant,
      input: input(),
      signal: new AbortController().signal,
    });
    assert.equal(run.providerClass, "fallback");
    await rejectsWith(
      engine({ closed }, { primary: "closed", standby: [] }).start({
        tenant,
        input: input(),
        signal: new AbortController().signal,
      }),
      "UPSTREAM_UNAVAILABLE",
    );
  });

  test("an upstream 429 with no standby is 429 UPSTREAM_RATE_LIMITED carrying the upstream's Retry-After", async () => {
    behaviour = (_req, res) => res.writeHead(429, { "retry-after": "7" }).end();
    const start = engine({ up: upstreamProvider() }, { primary: "up", standby: [] }).start({
      tenant,
      input: input(),
      signal: new AbortController().signal,
    });
    await assert.rejects(
      start,
      (e: unknown) =>
        e instanceof ApiError && e.code === "UPSTREAM_RATE_LIMITED" && e.status === 429 && e.retryAfter === 7,
    );
  });

  test("an upstream that never answers is 504 UPSTREAM_TIMEOUT", async () => {
    behaviour = () => undefined; // hold the request open
    await rejectsWith(
      engine({ up: upstreamProvider(200) }, { primary: "up", standby: [] }).start({
        tenant,
        input: input(),
        signal: new AbortController().signal,
      }),
      "UPSTREAM_TIMEOUT",
    );
  });

  test("an upstream content-policy refusal is 400 UPSTREAM_CONTENT_REJECTED and is not retried", async () => {
    behaviour = (_req, res) =>
      res
        .writeHead(400, { "content-type": "application/json" })
        .end(JSON.stringify({ error: { code: "content_filter", message: "flagged" } }));
    const b = scripted("b");
    await rejectsWith(
      engine({ up: upstreamProvider(), b }, { primary: "up", standby: ["b"] }).start({
        tenant,
        input: input(),
        signal: new AbortController().signal,
      }),
      "UPSTREAM_CONTENT_REJECTED",
    );
    assert.equal(b.calls, 0);
  });

  test("a working upstream's stream becomes text, tool calls and its usage", async () => {
    let sent: Record<string, unknown> = {};
    behaviour = (req, res) => {
      let raw = "";
      req.on("data", (c) => (raw += c));
      req.on("end", () => {
        sent = JSON.parse(raw);
        sse(res, [
          { choices: [{ delta: { role: "assistant", content: "Hel" }, finish_reason: null }] },
          { choices: [{ delta: { content: "lo" }, finish_reason: null }] },
          {
            choices: [
              {
                delta: {
                  tool_calls: [{ index: 0, id: "call_1", function: { name: "get_weather", arguments: '{"ci' } }],
                },
                finish_reason: null,
              },
            ],
          },
          {
            choices: [
              {
                delta: { tool_calls: [{ index: 0, function: { arguments: 'ty":"Oslo"}' } }] },
                finish_reason: "tool_calls",
              },
            ],
          },
          { choices: [], usage: { prompt_tokens: 11, completion_tokens: 5 } },
        ]);
      });
    };
    const run = await engine({ up: upstreamProvider() }, { primary: "up", standby: [] }).start({
      tenant,
      input: input({ tools: [{ name: "get_weather" }] }),
      signal: new AbortController().signal,
    });
    const events = await collect(run.events);
    assert.deepEqual(events, [
      { type: "text", delta: "Hel" },
      { type: "text", delta: "lo" },
      { type: "tool_call", callId: "call_1", name: "get_weather", arguments: '{"city":"Oslo"}' },
      { type: "done", finishReason: "tool_calls", usage: { inputTokens: 11, outputTokens: 5, reasoningTokens: 0 } },
    ]);
    assert.equal(sent.model, "upstream-model", "the upstream gets its own model name");
    assert.equal(sent.stream, true);
  });
});

describe("the routing file", () => {
  const withBaseUrl = (baseUrl: unknown) =>
    parseRoutingConfig(
      {
        version: "t",
        providers: { up: { type: "openai-compatible", baseUrl, model: "m" } },
        models: { "tiny-chat": { primary: "up", standby: [] } },
      },
      "routing.json",
    );

  test("an upstream's baseUrl must be an http or https URL, checked at start-up with the provider named", () => {
    for (const baseUrl of ["not a url", "127.0.0.1:8000/v1", "ftp://host/v1", "file:///v1"]) {
      assert.throws(
        () => withBaseUrl(baseUrl),
        (error: unknown) =>
          error instanceof Error &&
          error.message ===
            `routing.json: provider up: baseUrl must be an http or https URL, not ${JSON.stringify(baseUrl)}`,
        baseUrl,
      );
    }
    for (const baseUrl of ["http://127.0.0.1:8000/v1", "https://api.example.com/v1/"]) {
      assert.equal(withBaseUrl(baseUrl).providers.up?.type, "openai-compatible");
    }
  });
});

describe("rules checked before generation", () => {
  const one = () => engine({ a: scripted("a") }, { primary: "a", standby: [] });
  const start = (i: Partial<GenerationInput>) =>
    one().start({ tenant, input: input(i), signal: new AbortController().signal });

  test("an unknown model, or another account's model, is 404 MODEL_NOT_FOUND", async () => {
    await rejectsWith(start({ model: "no-such-model" }), "MODEL_NOT_FOUND", "model");
    await rejectsWith(start({ model: "accounts/globex/models/theirs" }), "MODEL_NOT_FOUND", "model");
  });

  test("platform models answer to their bare slug and to accounts/maas/models/{id}", async () => {
    const run = await start({ model: "accounts/maas/models/tiny-chat" });
    assert.equal(run.model.spec.id, "tiny-chat");
    assert.equal(run.model.name, "accounts/maas/models/tiny-chat");
  });

  test("reasoning sent to a model that does not reason is 400 MODEL_CAPABILITY_UNSUPPORTED", async () => {
    await rejectsWith(start({ reasoning: { effort: "low" } }), "MODEL_CAPABILITY_UNSUPPORTED", "reasoning");
  });

  test("tool_choice naming a missing function, or required with no tools, is 400 INVALID_REQUEST", async () => {
    await rejectsWith(start({ toolChoice: { mode: "function", name: "nope" } }), "INVALID_REQUEST", "tool_choice");
    await rejectsWith(start({ toolChoice: { mode: "required" } }), "INVALID_REQUEST", "tool_choice");
  });

  test("input plus max_output_tokens beyond the context window is 400 CONTEXT_LENGTH_EXCEEDED", async () => {
    await rejectsWith(start({ maxOutputTokens: 16_384 }), "CONTEXT_LENGTH_EXCEEDED", "max_output_tokens");
    await rejectsWith(
      start({ turns: [{ kind: "message", role: "user", text: "word ".repeat(17_000), media: [] }] }),
      "CONTEXT_LENGTH_EXCEEDED",
      "input",
    );
  });

  test("a blocked term in the input is 400 CONTENT_BLOCKED_INPUT, in the output CONTENT_BLOCKED_OUTPUT", async () => {
    await rejectsWith(start({ instructions: "Say something FORBIDDEN" }), "CONTENT_BLOCKED_INPUT");
    const leaky = scripted("leaky", async function* () {
      yield { type: "text", delta: "the sec" };
      yield { type: "text", delta: "ret is out" };
      yield { type: "done", finishReason: "stop", usage: { inputTokens: 1, outputTokens: 2, reasoningTokens: 0 } };
    });
    const run = await engine({ leaky }, { primary: "leaky", standby: [] }).start({
      tenant,
      input: input(),
      signal: new AbortController().signal,
    });
    await rejectsWith(collect(run.events), "CONTENT_BLOCKED_OUTPUT");
  });

  test("media: inline data over the limit is 413 MEDIA_TOO_LARGE, an unfetchable URL MEDIA_FETCH_FAILED, a text-only model MEDIA_UNSUPPORTED", async () => {
    const media = (part: Record<string, string>) =>
      input({
        turns: [
          {
            kind: "message",
            role: "user",
            text: "look",
            media: [{ kind: "image", param: "input[0].content[1]", ...part }],
          },
        ],
      });
    const a = one();
    await rejectsWith(
      a.start({ tenant, input: media({ data: "A".repeat(4000) }), signal: new AbortController().signal }),
      "MEDIA_TOO_LARGE",
      "input[0].content[1]",
    );
    await rejectsWith(
      a.start({
        tenant,
        input: media({ url: "https://example.invalid/cat.png" }),
        signal: new AbortController().signal,
      }),
      "MEDIA_FETCH_FAILED",
      "input[0].content[1]",
    );
    await rejectsWith(
      a.start({ tenant, input: media({ data: "AAAA" }), signal: new AbortController().signal }),
      "MEDIA_UNSUPPORTED",
      "input[0].content[1]",
    );
  });
});

describe("watching a run", () => {
  const stalled = scripted("stalled", async function* (req) {
    yield { type: "text", delta: "start" };
    await new Promise((_resolve, reject) => req.signal.addEventListener("abort", () => reject(req.signal.reason)));
  });

  test("a stream that goes quiet after it started fails with PARTIAL_RESPONSE_TIMEOUT and the provider is aborted", async () => {
    const run = await engine({ stalled }, { primary: "stalled", standby: [] }, { stallTimeoutMs: 50 }).start({
      tenant,
      input: input(),
      signal: new AbortController().signal,
    });
    await rejectsWith(collect(run.events), "PARTIAL_RESPONSE_TIMEOUT");
  });

  test("the caller's shorter deadline wins: REQUEST_DEADLINE_EXCEEDED", async () => {
    const run = await engine({ stalled }, { primary: "stalled", standby: [] }).start({
      tenant,
      input: input(),
      signal: new AbortController().signal,
      deadlineMs: 60,
    });
    await rejectsWith(collect(run.events), "REQUEST_DEADLINE_EXCEEDED");
  });

  /**
   * Like the embedded model: computes each token synchronously and yields to the event
   * loop only through setImmediate, so a deadline timer never gets its turn between tokens.
   */
  const busy = (tokenMs: number, tokens: number) =>
    scripted("busy", async function* (req) {
      for (let i = 0; i < tokens; i++) {
        const until = performance.now() + tokenMs;
        while (performance.now() < until); // the forward pass
        await new Promise((resolve) => setImmediate(resolve));
        if (req.signal.aborted) return;
        yield { type: "text", delta: `t${i} ` };
      }
      yield { type: "done", finishReason: "stop", usage: { inputTokens: 1, outputTokens: tokens, reasoningTokens: 0 } };
    });

  test("the deadline holds for a provider that computes without yielding to timers (the local model): none of it fits in 1 ms", async () => {
    // 10 ms a token, 30 tokens: the first token ends at 10 ms, all of them at 300 ms.
    const provider = busy(10, 30);
    const started = performance.now();
    await rejectsWith(
      engine({ provider }, { primary: "provider", standby: [] }).start({
        tenant,
        input: input(),
        signal: new AbortController().signal,
        deadlineMs: 1,
      }),
      "REQUEST_DEADLINE_EXCEEDED",
    );
    assert.ok(performance.now() - started < 150, "failed after the first token, not after all of them");
  });

  test("the deadline holds between the tokens of such a provider once output has started: the run fails part-way", async () => {
    const provider = busy(5, 200);
    const run = await engine({ provider }, { primary: "provider", standby: [] }).start({
      tenant,
      input: input(),
      signal: new AbortController().signal,
      deadlineMs: 50,
    });
    const seen: GenerationEvent[] = [];
    const started = performance.now();
    await rejectsWith(
      (async () => {
        for await (const e of run.events) seen.push(e);
      })(),
      "REQUEST_DEADLINE_EXCEEDED",
    );
    assert.ok(seen.length > 0 && seen.length < 20, `${seen.length} events before the deadline`);
    // All 200 tokens take 1 s; the deadline is 50 ms. The margin is for a loaded machine.
    assert.ok(performance.now() - started < 500, "stopped at the deadline, not at the end");
  });

  test("a client that goes away aborts the provider's signal at once", async () => {
    let seen: AbortSignal | undefined;
    const watcher = scripted("watcher", async function* (req) {
      seen = req.signal;
      yield { type: "text", delta: "x" };
      yield { type: "done", finishReason: "stop", usage: { inputTokens: 1, outputTokens: 1, reasoningTokens: 0 } };
    });
    const client = new AbortController();
    await engine({ watcher }, { primary: "watcher", standby: [] }).start({
      tenant,
      input: input(),
      signal: client.signal,
    });
    client.abort();
    assert.equal(seen?.aborted, true);
  });

  test("usage is charged to the tenant when generation finishes", async () => {
    charges.length = 0;
    const run = await engine({ a: scripted("a") }, { primary: "a", standby: [] }).start({
      tenant,
      input: input(),
      signal: new AbortController().signal,
    });
    await collect(run.events);
    assert.deepEqual(charges, [2]);
  });
});
