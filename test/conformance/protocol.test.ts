/**
 * The protocol checks of the kit, each against a hand-broken event sequence: a stream the
 * reference server produced (the recorded goldens) passes; the same stream with exactly one
 * thing broken fails with the rule that thing breaks.
 */
import assert from "node:assert/strict";
import path from "node:path";
import { describe, test } from "vitest";
import {
  checkHeaders,
  checkStream,
  Contract,
  kitRoot,
  loadGolden,
  parseSse,
  type ProtocolProblem,
} from "../../conformance/index.ts";
import { checkJsonBody } from "../../conformance/protocol.ts";
import type { SseEvent } from "../../conformance/sse.ts";

const goldens = path.join(kitRoot(), "goldens");

function recorded(id: string, step = 1): SseEvent[] {
  const sse = loadGolden(goldens, id)
    ?.steps.find((s) => s.step === step)
    ?.exchanges.at(-1)?.response.sse;
  assert.ok(sse, `golden ${id} step ${step} has a stream`);
  return parseSse(sse);
}

/** A deep copy whose data text follows its JSON. */
function copy(events: SseEvent[]): SseEvent[] {
  return events.map((e) => ({
    event: e.event,
    data: e.data,
    json: e.json === undefined ? undefined : structuredClone(e.json),
  }));
}

function sync(events: SseEvent[]): SseEvent[] {
  return events.map((e) => (e.json === undefined ? e : { ...e, data: JSON.stringify(e.json) }));
}

function edit(events: SseEvent[], change: (events: SseEvent[]) => void): SseEvent[] {
  const out = copy(events);
  change(out);
  return sync(out);
}

const renumber = (events: SseEvent[]) => events.forEach((e, i) => e.json && ((e.json as any).sequence_number = i));
const index = (events: SseEvent[], name: string, nth = 0) =>
  events.map((e, i) => [e, i] as const).filter(([e]) => e.event === name)[nth]?.[1] as number;
const data = (e: SseEvent | undefined) => e?.json as any;

function assertRule(problems: ProtocolProblem[], rule: string): void {
  assert.ok(
    problems.some((p) => p.rule === rule),
    `expected a ${rule} problem, got ${JSON.stringify(problems.map((p) => `${p.rule}: ${p.message}`))}`,
  );
}

describe("the /responses stream", () => {
  const good = recorded("events/stream-text");
  const check = (events: SseEvent[]) => checkStream("responses", events);

  test("the reference's stream passes, and so do its function call and reasoning streams", () => {
    assert.deepEqual(check(good), []);
    assert.deepEqual(check(recorded("events/stream-function-call")), []);
    assert.deepEqual(check(recorded("events/stream-reasoning")), []);
    assert.deepEqual(check(recorded("events/stream-incomplete")), []);
  });

  const broken: [string, string, (e: SseEvent[]) => void][] = [
    [
      "a [DONE] after response.completed",
      "events.no-done",
      (e) => e.push({ event: undefined, data: "[DONE]", json: undefined }),
    ],
    [
      "an event name that is not the data's type",
      "events.type-equals-event",
      (e) => ((e[4] as SseEvent).event = "response.output_text.done"),
    ],
    ["a sequence number skipped", "events.sequence", (e) => (data(e[5]).sequence_number = 6)],
    ["sequence numbers from 1", "events.sequence", (e) => e.forEach((x) => (data(x).sequence_number += 1))],
    ["response.completed dropped", "events.order", (e) => void e.pop()],
    ["response.created dropped", "events.order", (e) => (e.shift(), renumber(e))],
    ["response.in_progress dropped", "events.order", (e) => (e.splice(1, 1), renumber(e))],
    [
      "response.content_part.added dropped",
      "events.order",
      (e) => (e.splice(index(e, "response.content_part.added"), 1), renumber(e)),
    ],
    [
      "response.content_part.done dropped",
      "events.order",
      (e) => (e.splice(index(e, "response.content_part.done"), 1), renumber(e)),
    ],
    [
      "response.output_text.done dropped",
      "events.order",
      (e) => (e.splice(index(e, "response.output_text.done"), 1), renumber(e)),
    ],
    [
      "response.output_item.done dropped",
      "events.order",
      (e) => (e.splice(index(e, "response.output_item.done"), 1), renumber(e)),
    ],
    [
      "response.created twice",
      "events.order",
      (e) => (e.splice(1, 0, copy([e[0] as SseEvent])[0] as SseEvent), renumber(e)),
    ],
    [
      "output_text.done before the last delta",
      "events.deltas",
      (e) => {
        const done = index(e, "response.output_text.done");
        [e[done - 1], e[done]] = [e[done] as SseEvent, e[done - 1] as SseEvent];
        renumber(e);
      },
    ],
    [
      "a delta after output_text.done",
      "events.order",
      (e) => {
        const done = index(e, "response.output_text.done");
        e.splice(done + 1, 0, copy([e[done - 1] as SseEvent])[0] as SseEvent);
        renumber(e);
      },
    ],
    [
      "a delta duplicated",
      "events.deltas",
      (e) => {
        const delta = index(e, "response.output_text.delta");
        e.splice(delta, 0, copy([e[delta] as SseEvent])[0] as SseEvent);
        renumber(e);
      },
    ],
    ["a delta mangled", "events.deltas", (e) => (data(e[index(e, "response.output_text.delta", 1)]).delta = "X")],
    [
      "the item id changed in output_item.done",
      "events.item-ids",
      (e) => (data(e[index(e, "response.output_item.done")]).item.id = "msg_other"),
    ],
    [
      "a delta naming another item",
      "events.item-ids",
      (e) => (data(e[index(e, "response.output_text.delta")]).item_id = "msg_other"),
    ],
    [
      "the response id changed in response.completed",
      "events.item-ids",
      (e) => (data(e.at(-1)).response.id = "resp_other"),
    ],
    [
      "response.completed with another text than streamed",
      "events.item-ids",
      (e) => (data(e.at(-1)).response.output[0].content[0].text = "other"),
    ],
    ["response.completed without the item", "events.item-ids", (e) => (data(e.at(-1)).response.output = [])],
    ["usage that does not add up", "events.completed-usage", (e) => (data(e.at(-1)).response.usage.total_tokens += 1)],
    ["usage missing from response.completed", "events.completed-usage", (e) => delete data(e.at(-1)).response.usage],
    ["store true in response.completed", "responses.rule-1", (e) => (data(e.at(-1)).response.store = true)],
    [
      "incomplete without incomplete_details",
      "states.response",
      (e) => {
        data(e.at(-1)).response.status = "incomplete";
        delete data(e.at(-1)).response.incomplete_details;
      },
    ],
    [
      "completed with incomplete_details",
      "states.response",
      (e) => {
        data(e.at(-1)).response.status = "completed";
        data(e.at(-1)).response.incomplete_details = { reason: "max_output_tokens" };
      },
    ],
    [
      "response.created with usage counted",
      "events.created",
      (e) => (data(e[0]).response.usage = { input_tokens: 8, output_tokens: 0, total_tokens: 8 }),
    ],
    ["response.created not in_progress", "events.created", (e) => (data(e[0]).response.status = "completed")],
    ["response.created with output", "events.created", (e) => (data(e[0]).response.output = [{ id: "x" }])],
    [
      "an added item already completed",
      "events.order",
      (e) => (data(e[index(e, "response.output_item.added")]).item.status = "completed"),
    ],
    [
      "a done item still in progress",
      "events.order",
      (e) => (data(e[index(e, "response.output_item.done")]).item.status = "in_progress"),
    ],
    [
      "an output_index that is not the open item's",
      "events.order",
      (e) => (data(e[index(e, "response.output_text.delta")]).output_index = 1),
    ],
    [
      "an event after response.completed",
      "events.order",
      (e) => {
        e.push(copy([e[index(e, "response.output_text.delta")] as SseEvent])[0] as SseEvent);
        renumber(e);
      },
    ],
    [
      "an error event followed by more events",
      "errors.rule-4",
      (e) => {
        e.splice(3, 0, {
          event: "error",
          data: "",
          json: { type: "error", code: "INTERNAL", message: "x", param: null },
        });
        renumber(e);
      },
    ],
  ];
  for (const [what, rule, change] of broken) {
    test(`caught: ${what} (${rule})`, () => assertRule(check(edit(good, change)), rule));
  }

  test("an error event that ends the stream is a valid end", () => {
    const events = edit(good, (e) => {
      e.splice(index(e, "response.output_text.done"));
      e.push({
        event: "error",
        data: "",
        json: { type: "error", code: "PARTIAL_RESPONSE_TIMEOUT", message: "stalled", param: null },
      });
      renumber(e);
    });
    assert.deepEqual(check(events), []);
  });

  test("an error event without a code", () => {
    const events = edit(good, (e) => {
      e.splice(3);
      e.push({ event: "error", data: "", json: { type: "error", message: "stalled" } });
      renumber(e);
    });
    assertRule(check(events), "errors.rule-4");
  });
});

describe("the status of the item the output ceiling cut", () => {
  const cut = recorded("events/stream-incomplete");
  const whole = recorded("events/stream-text", 1);
  const check = (events: SseEvent[]) => checkStream("responses", events);
  const done = (e: SseEvent[]) => data(e[index(e, "response.output_item.done")]).item;
  const final = (e: SseEvent[]) => data(e.at(-1)).response;

  test("the reference's cut stream marks its message incomplete, and passes", () => {
    assert.equal(final(cut).status, "incomplete");
    assert.equal(done(cut).status, "incomplete");
    assert.equal(final(cut).output.at(-1).status, "incomplete");
    assert.deepEqual(check(cut), []);
  });

  const broken: [string, string, SseEvent[], (events: SseEvent[]) => void][] = [
    [
      "the cut message reported completed",
      "states.response",
      cut,
      (e) => {
        done(e).status = "completed";
        final(e).output[0].status = "completed";
      },
    ],
    [
      "a message incomplete in a completed response",
      "states.response",
      whole,
      (e) => {
        final(e).status = "completed";
        final(e).incomplete_details = null;
        done(e).status = "incomplete";
        final(e).output[0].status = "incomplete";
      },
    ],
    [
      "an incomplete item before the last one",
      "states.response",
      cut,
      (e) => final(e).output.push({ ...final(e).output[0], id: "msg_other", status: "completed" }),
    ],
    [
      "a function call incomplete",
      "states.response",
      cut,
      (e) =>
        (final(e).output = [
          {
            id: "fc_1",
            type: "function_call",
            role: "assistant",
            status: "incomplete",
            call_id: "c",
            name: "f",
            arguments: "{}",
          },
        ]),
    ],
    ["a done item with another status", "events.order", cut, (e) => (done(e).status = "cut")],
  ];
  for (const [what, rule, base, change] of broken) {
    test(`caught: ${what} (${rule})`, () => assertRule(check(edit(base, change)), rule));
  }

  test("the same rules on a JSON answer", () => {
    const body = (status: string, items: string[]) => ({
      status,
      store: false,
      incomplete_details: status === "incomplete" ? { reason: "max_output_tokens" } : null,
      usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
      output: items.map((s, i) => ({ id: `msg_${i}`, type: "message", role: "assistant", status: s, content: [] })),
    });
    const states = (b: unknown) => checkJsonBody("responses", b).filter((p) => p.rule === "states.response");
    assert.deepEqual(states(body("incomplete", ["incomplete"])), []);
    assert.deepEqual(states(body("completed", ["completed"])), []);
    assert.deepEqual(states(body("incomplete", [])), []);
    assert.equal(states(body("incomplete", ["completed"])).length, 1, "the cut message must say incomplete");
    assert.equal(states(body("completed", ["incomplete"])).length, 1, "nothing is cut in a completed response");
    assert.equal(states(body("incomplete", ["incomplete", "incomplete"])).length, 1, "only the last item is cut");
  });
});

describe("the chat completions and completions streams", () => {
  const chat = recorded("inference/chat-completions-stream");
  const check = (events: SseEvent[]) => checkStream("chat", events, { includeUsage: true });

  test("the reference's streams pass", () => {
    assert.deepEqual(check(chat), []);
    assert.deepEqual(checkStream("chat", recorded("inference/chat-completions-stream", 2)), []);
    assert.deepEqual(checkStream("completions", recorded("inference/completions", 2)), []);
  });

  const broken: [string, string, (e: SseEvent[]) => void][] = [
    ["no [DONE]", "inference.stream-done", (e) => void e.pop()],
    ["[DONE] twice", "inference.stream-done", (e) => e.push({ event: undefined, data: "[DONE]", json: undefined })],
    [
      "[DONE] before the last chunk",
      "inference.stream-done",
      (e) => {
        const done = e.pop() as SseEvent;
        e.splice(1, 0, done);
      },
    ],
    ["a chunk with another id", "inference.stream-chunks", (e) => (data(e[1]).id = "chatcmpl_other")],
    ["a chunk of another object", "inference.stream-chunks", (e) => (data(e[1]).object = "chat.completion")],
    ["no usage chunk although asked for", "inference.stream-chunks", (e) => void e.splice(e.length - 2, 1)],
    ["usage that does not add up", "inference.usage", (e) => (data(e[e.length - 2]).usage.total_tokens += 1)],
    [
      "no finish_reason",
      "inference.stream-chunks",
      (e) => e.forEach((x) => data(x)?.choices?.forEach((c: any) => (c.finish_reason = null))),
    ],
    [
      "text after the finish_reason",
      "inference.stream-chunks",
      (e) => {
        const last = e.findIndex((x) => data(x)?.choices?.[0]?.finish_reason);
        data(e[last]).choices[0].delta = { content: "more" };
        e.splice(last + 1, 0, copy([e[1] as SseEvent])[0] as SseEvent);
      },
    ],
  ];
  for (const [what, rule, change] of broken) {
    test(`caught: ${what} (${rule})`, () => assertRule(check(edit(chat, change)), rule));
  }

  test("an error event is the end: no [DONE] after it", () => {
    const events = edit(chat, (e) => {
      e.splice(2, e.length - 3, {
        event: "error",
        data: "",
        json: { error: { code: "INTERNAL", message: "x", type: "server_error", param: null } },
      });
    });
    assertRule(check(events), "inference.stream-done");
  });
});

describe("the messages stream", () => {
  const good = recorded("inference/messages-stream");
  const check = (events: SseEvent[]) => checkStream("messages", events);

  test("the reference's stream passes", () => assert.deepEqual(check(good), []));

  const broken: [string, (e: SseEvent[]) => void][] = [
    ["message_stop dropped", (e) => void e.pop()],
    ["message_start dropped", (e) => void e.shift()],
    ["a [DONE] at the end", (e) => e.push({ event: undefined, data: "[DONE]", json: undefined })],
    [
      "an event name that is not the data's type",
      (e) => ((e[index(e, "content_block_delta")] as SseEvent).event = "content_block_stop"),
    ],
    ["content_block_start dropped", (e) => void e.splice(index(e, "content_block_start"), 1)],
    ["content_block_stop dropped", (e) => void e.splice(index(e, "content_block_stop"), 1)],
    ["message_delta without usage", (e) => delete data(e[index(e, "message_delta")]).usage],
    [
      "a delta of another kind than its block",
      (e) => (data(e[index(e, "content_block_delta")]).delta.type = "input_json_delta"),
    ],
    ["a delta naming another block", (e) => (data(e[index(e, "content_block_delta")]).index = 3)],
  ];
  for (const [what, change] of broken) {
    test(`caught: ${what}`, () => assertRule(check(edit(good, change)), "inference.messages-stream"));
  }
});

describe("headers", () => {
  test("x-request-id on every response", () => {
    assert.deepEqual(checkHeaders(200, new Headers({ "x-request-id": "req_1" })), []);
    assertRule(checkHeaders(200, new Headers()), "headers.x-request-id");
    assertRule(checkHeaders(404, new Headers({ "x-request-id": " " })), "headers.x-request-id");
  });

  test("Retry-After, a positive integer, on 429 and 503", () => {
    assert.deepEqual(checkHeaders(429, new Headers({ "x-request-id": "r", "retry-after": "1" })), []);
    assert.deepEqual(checkHeaders(503, new Headers({ "x-request-id": "r", "retry-after": "12" })), []);
    // 0 would tell a client to retry at once, which a limit that is still in force refuses again.
    assertRule(checkHeaders(429, new Headers({ "x-request-id": "r", "retry-after": "0" })), "headers.retry-after");
    assertRule(checkHeaders(429, new Headers({ "x-request-id": "r" })), "headers.retry-after");
    assertRule(checkHeaders(503, new Headers({ "x-request-id": "r", "retry-after": "1.5" })), "headers.retry-after");
    assertRule(checkHeaders(429, new Headers({ "x-request-id": "r", "retry-after": "-1" })), "headers.retry-after");
    assertRule(
      checkHeaders(429, new Headers({ "x-request-id": "r", "retry-after": "Wed, 21 Oct 2026 07:28:00 GMT" })),
      "headers.retry-after",
    );
  });
});

describe("each event against the contract's itemSchema", () => {
  const contract = Contract.load();
  const op = contract.findOperation("POST", "/responses");
  const good = recorded("events/stream-text");
  assert.ok(op);

  test("every event of the reference's stream validates", () => {
    good.forEach((e, i) => assert.deepEqual(contract.validateEvent(op, e, i), []));
  });

  test("an event the contract does not have", () => {
    const problems = contract.validateEvent(
      op,
      { event: "response.reasoning_summary_text.delta", data: "{}", json: {} },
      0,
    );
    assert.match(problems[0]?.message ?? "", /not an event of \/responses/);
  });

  test("a field the contract does not have", () => {
    const e = copy([good[4] as SseEvent])[0] as SseEvent;
    (e.json as any).obfuscation = "xyz"; // an Open Responses field this contract does not declare
    assert.ok(contract.validateEvent(op, e, 4).length > 0);
  });

  test("an event without its event: line", () => {
    const e = copy([good[0] as SseEvent])[0] as SseEvent;
    e.event = undefined;
    assert.ok(contract.validateEvent(op, e, 0).some((p) => /event:/.test(p.message)));
  });

  test("data that is not JSON", () => {
    assert.ok(
      contract
        .validateEvent(op, { event: "response.created", data: "{not json", json: undefined }, 0)
        .some((p) => /not JSON/.test(p.message)),
    );
  });

  test("[DONE] is a valid chat completions event and no /responses event", () => {
    const chat = contract.findOperation("POST", "/chat/completions");
    assert.ok(chat);
    assert.deepEqual(contract.validateEvent(chat, { event: undefined, data: "[DONE]", json: undefined }, 3), []);
    assert.ok(contract.validateEvent(op, { event: undefined, data: "[DONE]", json: undefined }, 3).length > 0);
  });
});
