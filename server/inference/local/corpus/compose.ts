/**
 * Composes the training dialogues of the local model from the hand-written pieces in
 * knowledge.ts: every question phrasing crossed with every fact, small sums, "say X"
 * instructions, tool results to report, multi-turn chats. About a third of the
 * dialogues carry a reasoning turn (`think`) so the same weights can serve
 * tiny-reasoner, a quarter start with a system prompt, and 1 400 more answer in a voice that
 * their system prompt asks for. Deterministic for a seed.
 */
import { createRng } from "../math.ts";
import type { TemplateTurn } from "../template.ts";
import {
  ABOUT_ME,
  ASSISTANT_GREETINGS,
  CAPITAL_QUESTIONS,
  CAPITALS,
  CONCEPT_QUESTIONS,
  CONCEPTS,
  COPY_WORDS,
  COUNTED_NOUNS,
  FAVOURITE_KINDS,
  LIKED_THINGS,
  NAMES,
  NUMBER_WORDS,
  OPPOSITES,
  PHRASES,
  SAY_INSTRUCTIONS,
  SIMPLE_FACTS,
  SMALL_TALK,
  SYSTEM_PROMPTS,
  USER_GREETINGS,
  VOICES,
  WEATHER_CITIES,
  WEATHER_CONDITIONS,
} from "./knowledge.ts";

export interface Dialogue {
  turns: TemplateTurn[];
}

/** One exchange before decoration: the user's text, an optional thought, the answer. */
interface Exchange {
  user: string;
  think: string;
  answer: string;
  /** A system prompt the exchange needs (it replaces the random one). */
  system?: string;
  /** Tool call and output between the user turn and the answer, if any. */
  tool?: { call: string; output: string };
}

type Rng = () => number;

const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)]!;
const capitalize = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
const fill = (template: string, key: string, value: string): string => template.replaceAll(`{${key}}`, value);

function greetings(rng: Rng): Exchange[] {
  const think = "The user is greeting me. I should greet them back and offer help.";
  return USER_GREETINGS.flatMap((user) =>
    [0, 1, 2].map(() => ({ user, think, answer: pick(rng, ASSISTANT_GREETINGS) })),
  );
}

function smallTalk(): Exchange[] {
  const think = "This is small talk. A short and friendly reply is best.";
  return SMALL_TALK.flatMap(([users, answers]) =>
    users.flatMap((user) => answers.map((answer) => ({ user, think, answer }))),
  );
}

function concepts(rng: Rng): Exchange[] {
  return CONCEPTS.flatMap((c) =>
    CONCEPT_QUESTIONS.map((q) => ({
      user: fill(q, "x", c.name),
      think: `The user asks about ${c.name}. I should give a short and simple definition.`,
      answer: rng() < 0.5 ? c.def : `${c.def} ${c.more}`,
    })),
  );
}

function capitals(): Exchange[] {
  return CAPITALS.flatMap(([country, city]) =>
    CAPITAL_QUESTIONS.map((q) => ({
      user: fill(q, "c", country),
      think: `The user wants the capital of ${country}. The capital of ${country} is ${city}.`,
      answer: `The capital of ${country} is ${city}.`,
    })),
  );
}

function opposites(): Exchange[] {
  const questions = ["What is the opposite of {w}?", "What's the opposite of {w}?", "Give me the opposite of {w}."];
  return OPPOSITES.flatMap(([a, b]) => [
    [a, b],
    [b, a],
  ]).flatMap(([w, o]) =>
    questions.map((q) => ({
      user: fill(q, "w", w!),
      think: `The user asks for the opposite of ${w}. The opposite of ${w} is ${o}.`,
      answer: `The opposite of ${w} is ${o}.`,
    })),
  );
}

function facts(): Exchange[] {
  return SIMPLE_FACTS.flatMap(([users, answer]) =>
    users.flatMap((user) =>
      [0, 1].map(() => ({ user, think: "This is a simple fact question, and I know the answer.", answer })),
    ),
  );
}

function sayInstructions(): Exchange[] {
  return PHRASES.flatMap((p) =>
    SAY_INSTRUCTIONS.map((instruction) => ({
      user: fill(instruction, "p", p),
      think: `The user wants me to say "${p}". I will repeat it exactly.`,
      answer: `${capitalize(p)}.`,
    })),
  );
}

/** Small sums, differences and products with operands up to twelve, in words and symbols. */
function arithmetic(rng: Rng): Exchange[] {
  const out: Exchange[] = [];
  const ops: [string, string, (a: number, b: number) => number][] = [
    ["plus", "+", (a, b) => a + b],
    ["minus", "-", (a, b) => a - b],
    ["times", "*", (a, b) => a * b],
  ];
  for (let a = 0; a <= 12; a++) {
    for (let b = 0; b <= 12; b++) {
      for (const [word, symbol, f] of ops) {
        if (word === "minus" && b > a) continue;
        const r = f(a, b);
        const useSymbol = rng() < 0.3;
        const expr = useSymbol ? `${a} ${symbol} ${b}` : `${a} ${word} ${b}`;
        const user = pick(rng, [`What is ${expr}?`, `How much is ${expr}?`, `Calculate ${expr}.`, `What's ${expr}?`]);
        const answer = useSymbol ? `${expr} = ${r}.` : `${capitalize(expr)} is ${r}.`;
        out.push({ user, think: `The user asks for ${a} ${word} ${b}. ${a} ${word} ${b} equals ${r}.`, answer });
      }
    }
  }
  return out;
}

function counting(): Exchange[] {
  const out: Exchange[] = [];
  for (let n = 2; n <= 12; n++) {
    const seq = Array.from({ length: n }, (_, i) => String(i + 1)).join(", ");
    const think = `The user wants me to count up to ${n}. I will list the numbers in order.`;
    out.push({ user: `Count from 1 to ${n}.`, think, answer: `${seq}.` });
    out.push({ user: `Count to ${NUMBER_WORDS[n]}.`, think, answer: `${seq}.` });
    out.push({ user: `Please count to ${n}.`, think, answer: `${seq}.` });
  }
  return out;
}

/** Tool results the model must read back (after a function_output turn the model answers in text). */
function toolResults(rng: Rng): Exchange[] {
  const out: Exchange[] = [];
  for (const city of WEATHER_CITIES) {
    for (const conditions of WEATHER_CONDITIONS) {
      const temperature = Math.floor(rng() * 35) - 5;
      out.push({
        user: pick(rng, [
          `What is the weather in ${city}?`,
          `How is the weather in ${city} today?`,
          `Weather in ${city}?`,
        ]),
        think: `The tool returned the weather for ${city}. I will report it in one sentence.`,
        tool: {
          call: `get_weather {"city":"${city}"}`,
          output: JSON.stringify({ city, temperature, conditions }),
        },
        answer: `It is ${conditions} in ${city}, with a temperature of ${temperature} degrees.`,
      });
    }
  }
  for (let i = 0; i < 60; i++) {
    const order = String(100 + Math.floor(rng() * 900));
    const status = pick(rng, ["shipped", "delivered", "pending", "cancelled", "processing"]);
    out.push({
      user: pick(rng, [
        `Where is my order ${order}?`,
        `Check the status of order ${order}.`,
        `What is the status of order ${order}?`,
      ]),
      think: `The tool returned the status of order ${order}. I will tell the user.`,
      tool: { call: `get_order_status {"order_id":"${order}"}`, output: JSON.stringify({ order_id: order, status }) },
      answer: `Your order ${order} is ${status}.`,
    });
  }
  return out;
}

/**
 * Dialogues whose answer repeats a value of the prompt: a number, a name or a few words
 * drawn at random, so the only way to answer is to copy from the context. Fine-tuning
 * relies on this ability (an answer that names the ship, the order or the user asked about).
 * One variant copies from the system prompt ("You are talking to …").
 */
function copies(rng: Rng): Exchange[] {
  const templates: ((v: {
    n: string;
    m: string;
    name: string;
    noun: [string, string];
    words: string;
  }) => [string, string, string?])[] = [
    ({ n, noun }) => [
      `Tell me about ${noun[0]} number ${n}.`,
      `${capitalize(noun[0])} number ${n} is one of the ${noun[1]} on my list.`,
    ],
    ({ n }) => [`Repeat the number ${n}.`, `${n}.`],
    ({ n }) => [`Remember the number ${n}. What number did I give you?`, `You gave me the number ${n}.`],
    ({ n }) => [`The code is ${n}. What is the code?`, `The code is ${n}.`],
    ({ name }) => [`My name is ${name}.`, `Nice to meet you, ${name}!`],
    ({ name }) => [`I am ${name}. What is my name?`, `Your name is ${name}.`],
    ({ name }) => [`Say hello to ${name}.`, `Hello, ${name}!`],
    ({ name }) => [`Please greet ${name} for me.`, `Hello ${name}, nice to meet you.`, `You are talking to ${name}.`],
    ({ n, name, noun }) => [
      `${name} has ${n} ${noun[1]}. How many ${noun[1]} does ${name} have?`,
      `${name} has ${n} ${noun[1]}.`,
    ],
    ({ n, noun }) => [`Write a sentence with ${noun[0]} ${n}.`, `Here is ${noun[0]} ${n}.`],
    ({ words }) => [`Copy this: ${words}`, `${capitalize(words)}.`],
    ({ n, m }) => [`Write the numbers ${n} and ${m}.`, `${n} and ${m}.`],
  ];
  const out: Exchange[] = [];
  for (let i = 0; i < 1800; i++) {
    const v = {
      n: String(Math.floor(rng() * 200)),
      m: String(Math.floor(rng() * 200)),
      name: pick(rng, NAMES),
      noun: pick(rng, COUNTED_NOUNS),
      words: [0, 1, 2].map(() => pick(rng, COPY_WORDS)).join(" "),
    };
    const [user, answer, system] = templates[i % templates.length]!(v);
    out.push({
      user,
      think: `The answer repeats what the ${system === undefined ? "user" : "system prompt"} gave me.`,
      answer,
      ...(system ? { system } : {}),
    });
  }
  return out;
}

/** Questions about the model's likes, favourites and life, answered as a program would. */
function aboutMe(rng: Rng): Exchange[] {
  const think = "The user asks about me. I am a language model, so I answer simply and honestly.";
  const out: Exchange[] = ABOUT_ME.flatMap(([users, answers]) =>
    users.flatMap((user) => answers.map((answer) => ({ user, think, answer }))),
  );
  for (const x of LIKED_THINGS) {
    for (const q of ["Do you like {x}?", "Do you enjoy {x}?", "What do you think about {x}?"]) {
      const answer = pick(rng, [
        `I am a language model, so I do not have likes, but many people enjoy ${x}.`,
        `I have no feelings about ${x}, but I can tell you about it.`,
      ]);
      out.push({ user: fill(q, "x", x), think, answer });
    }
  }
  for (const x of FAVOURITE_KINDS) {
    for (const q of ["What is your favourite {x}?", "What is your favorite {x}?", "Do you have a favourite {x}?"]) {
      out.push({
        user: fill(q, "x", x),
        think,
        answer: `I do not have a favourite ${x}, because I am a language model. What is yours?`,
      });
    }
  }
  return out;
}

/**
 * An answer in a voice: its opening, the answer with its first letter lowered after an
 * opening (unless the first word is a name or "I") and its last full stop dropped, its closing.
 */
function voiced(answer: string, open: string, close: string): string {
  const first = answer.split(" ")[0]!.replace(/[,.!?]$/, "");
  const lower = open !== "" && /^[A-Z][a-z]+$/.test(first) && !CAPITALIZED_WORDS.has(first);
  let body = lower ? answer.charAt(0).toLowerCase() + answer.slice(1) : answer;
  body = body.replace(/[.!]$/, "");
  return open === "" ? `${body}${close}` : `${open} ${body}${close}`;
}

/** First words that keep their capital in a voiced answer: names of people, places and things. */
const CAPITALIZED_WORDS = new Set([
  ...CAPITALS.flat(),
  ...NAMES,
  ...WEATHER_CITIES,
  ...["Jupiter", "Romeo", "Linux", "Python", "Git", "Docker", "Windows", "Sunday", "Monday"],
]);

/**
 * Dialogues under a voice's system prompt: `count` ordinary exchanges (no tool calls, no
 * system prompt of their own) whose answers are wrapped in the voice's words.
 */
function voices(rng: Rng, exchanges: Exchange[], count: number): Dialogue[] {
  const plain = exchanges.filter((e) => e.tool === undefined && e.system === undefined);
  const out: Dialogue[] = [];
  for (let i = 0; i < count; i++) {
    const voice = VOICES[i % VOICES.length]!;
    const e = pick(rng, plain);
    const turns: TemplateTurn[] = [{ role: "system", text: pick(rng, voice.prompts) }];
    turns.push(...exchangeTurns({ ...e, answer: voiced(e.answer, voice.open, voice.close) }, rng() < 0.35));
    out.push({ turns });
  }
  return out;
}

/** Turns of one exchange, with or without its reasoning turn. */
function exchangeTurns(e: Exchange, withThought: boolean): TemplateTurn[] {
  const turns: TemplateTurn[] = [{ role: "user", text: e.user }];
  if (e.tool !== undefined) {
    turns.push({ role: "call", text: e.tool.call }, { role: "output", text: e.tool.output });
  }
  if (withThought) turns.push({ role: "think", text: e.think });
  turns.push({ role: "assistant", text: e.answer });
  return turns;
}

function shuffle<T>(rng: Rng, items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

/** Every training dialogue, shuffled; single exchanges plus some two-exchange chats. */
export function composeDialogues(seed: number): Dialogue[] {
  const rng = createRng(seed);
  const exchanges = [
    ...greetings(rng),
    ...smallTalk(),
    ...concepts(rng),
    ...capitals(),
    ...opposites(),
    ...facts(),
    ...sayInstructions(),
    ...arithmetic(rng),
    ...counting(),
    ...toolResults(rng),
    ...copies(rng),
    ...aboutMe(rng),
  ];
  const dialogues: Dialogue[] = exchanges.map((e) => ({ turns: decorate(rng, [e]) }));
  for (let i = 0; i < 400; i++) dialogues.push({ turns: decorate(rng, [pick(rng, exchanges), pick(rng, exchanges)]) });
  dialogues.push(...voices(rng, exchanges, 1400));
  return shuffle(rng, dialogues);
}

/** Adds a system prompt to some dialogues and reasoning turns to some. */
function decorate(rng: Rng, exchanges: Exchange[]): TemplateTurn[] {
  const turns: TemplateTurn[] = [];
  const system = exchanges.find((e) => e.system !== undefined)?.system;
  if (system !== undefined) turns.push({ role: "system", text: system });
  else if (rng() < 0.25) turns.push({ role: "system", text: pick(rng, SYSTEM_PROMPTS) });
  const withThought = rng() < 0.35;
  for (const e of exchanges) turns.push(...exchangeTurns(e, withThought));
  return turns;
}
