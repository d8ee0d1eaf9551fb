import { test } from "vitest";
import assert from "node:assert/strict";
import {
  countInputTokens,
  countTokens,
  decode,
  encode,
  MESSAGE_OVERHEAD_TOKENS,
  REPLY_PRIMING_TOKENS,
} from "../../server/inference/tokenizer.ts";
import { type Vocabulary, buildVocabulary } from "../../server/inference/local/vocab.ts";

test("encode/decode round-trips text, including special-token strings as plain text", () => {
  const text = "Hello, world! <|endoftext|> Äpfel 東京";
  assert.equal(decode(encode(text)), text);
  assert.equal(countTokens(text), encode(text).length);
  assert.equal(countTokens(""), 0);
});

test("conversation input tokens are text tokens plus a fixed overhead per message", () => {
  const input = {
    instructions: "Be brief.",
    turns: [
      { kind: "message" as const, role: "user" as const, text: "What is the weather in Paris?", media: [] },
      { kind: "function_call" as const, callId: "c1", name: "get_weather", arguments: '{"city":"Paris"}' },
      { kind: "function_output" as const, callId: "c1", output: '{"temperature":18}' },
    ],
  };
  const expected =
    REPLY_PRIMING_TOKENS +
    4 * MESSAGE_OVERHEAD_TOKENS +
    countTokens("Be brief.") +
    countTokens("What is the weather in Paris?") +
    countTokens('get_weather {"city":"Paris"}') +
    countTokens('{"temperature":18}');
  assert.equal(countInputTokens(input), expected);
  const tool = { name: "get_weather", description: "Weather", parameters: { type: "object" } };
  assert.equal(
    countInputTokens({ ...input, tools: [tool] }),
    expected + MESSAGE_OVERHEAD_TOKENS + countTokens('get_weather\nWeather\n{"type":"object"}'),
  );
});

test("the compact vocabulary spells unknown words with characters, so ASCII text survives exactly", () => {
  const vocab: Vocabulary = buildVocabulary(["The sky is blue."]);
  const text = "Zyxwvut quokka!";
  const ids = vocab.encode(text);
  assert.equal(vocab.decode(ids), text);
  assert.ok(ids.length > encode(text).length, "unknown BPE tokens are spelled out");
  assert.ok(!ids.includes(0), "no <unk> for ASCII");
  assert.ok(vocab.encode("東京").includes(0), "non-ASCII outside the vocabulary is <unk>");
});
