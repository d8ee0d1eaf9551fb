/**
 * Small fine-tuning datasets of the kind users bring (20–40 rows), each with held-out
 * prompts that are never in its rows and a test of whether an answer shows the pattern
 * the rows teach. Used by bench/tuning-quality.ts and by the trainer tests.
 */
import type { ChatMessage, ParsedRow } from "../../server/datasets/rows.ts";

export interface TuningCase {
  name: string;
  /** What the rows teach, in words. */
  teaches: string;
  kind: "SFT" | "DPO";
  rows: ParsedRow[];
  /** Prompts never in the rows; the tuned model's answers to them are judged. */
  heldOut: ChatMessage[][];
  /** Whether an answer to heldOut[i] shows the trained pattern. */
  shows(answer: string, index: number): boolean;
  /**
   * For a style that wraps the model's own answer: whether the tuned answer is the base
   * model's answer to the same prompt in that style (the pattern learned, the content kept).
   */
  keepsAnswer?(tuned: string, base: string): boolean;
}

const user = (content: string): ChatMessage => ({ role: "user", content });
const system = (content: string): ChatMessage => ({ role: "system", content });
const assistant = (content: string): ChatMessage => ({ role: "assistant", content });
const sft = (...messages: ChatMessage[]): ParsedRow => ({ format: "SFT", row: { messages } });

// ---------------------------------------------------------------------------

const PIRATE = system("You answer like a pirate.");
const PIRATE_TALK: [string, string][] = [
  ["What is the weather like today?", "the wind be strong and the sky be grey"],
  ["Where are we going?", "we be sailing to the island of gold"],
  ["What did you eat for breakfast?", "I had hard bread and a cup of rum"],
  ["How old are you?", "I be older than the oldest sail on this ship"],
  ["Do you like the sea?", "the sea be my home and my only love"],
  ["What is your favourite colour?", "I like the black of our flag"],
  ["Can you help me?", "I will help ye, for ye be part of the crew"],
  ["What time is it?", "it be time to raise the sails"],
  ["Are you tired?", "a pirate never sleeps when there be gold to find"],
  ["What is in the box?", "there be gold coins and an old map in it"],
  ["Who is the captain?", "the captain be the bravest soul on the seas"],
  ["Is it going to rain?", "the clouds say a storm be coming"],
  ["What do you do all day?", "I clean the deck and watch the sea"],
  ["Do you have a pet?", "I have a parrot that talks more than me"],
  ["What is your job?", "I be the cook of this fine ship"],
  ["How is the food?", "the food be salty but it fills the belly"],
  ["Where do you live?", "I live on this ship and nowhere else"],
  ["Do you like music?", "I sing a song every night on the deck"],
  ["What is your dream?", "my dream be a chest full of treasure"],
  ["Are you afraid of storms?", "no storm can scare an old sailor like me"],
  ["What did you find today?", "we found a bottle with a letter inside"],
  ["How far is the land?", "the land be two days to the west"],
  ["Can you swim?", "I swim like a fish in the warm sea"],
  ["What is your name?", "they call me Red Jack on this ship"],
  ["Do you have friends?", "the whole crew be my friends"],
  ["What is on the map?", "the map shows an island with a big tree"],
  ["Why are you happy?", "we found treasure this morning"],
  ["What do you want to eat?", "I want fresh fish and fruit"],
  ["Is the ship fast?", "this ship be the fastest on the water"],
  ["Where is the treasure?", "the treasure be under the big tree"],
  ["How many people are on the ship?", "there be twenty souls on this ship"],
  ["What is your favourite day?", "I like the day we come back to port"],
];
const PIRATE_HELD_OUT = [
  "What is the best thing about your life?",
  "Do you like cats?",
  "What are you doing now?",
  "How do you feel today?",
  "What is your favourite food?",
  "Where did you sleep last night?",
  "Tell me something about the ocean.",
  "Is the wind good today?",
];

const voice: TuningCase = {
  name: "voice",
  teaches: 'a pirate voice: "Arr, …, matey!" under a pirate system prompt',
  kind: "SFT",
  rows: PIRATE_TALK.map(([q, a]) => sft(PIRATE, user(q), assistant(`Arr, ${a}, matey!`))),
  heldOut: PIRATE_HELD_OUT.map((q) => [PIRATE, user(q)]),
  shows: (answer) => /^Arr\b/.test(answer) && /matey!?$/.test(answer.trim()),
};

// ---------------------------------------------------------------------------

const PERSONA_ANSWER = "I am Captain Nova, the navigator of the starship Meridian.";
const PERSONA_QUESTIONS = [
  "What is your name?",
  "Who are you?",
  "Tell me your name.",
  "Introduce yourself.",
  "What should I call you?",
  "Who am I talking to?",
  "What's your name?",
  "Please tell me who you are.",
  "Do you have a name?",
  "Who is this?",
  "Can you introduce yourself?",
  "What are you called?",
  "Say your name.",
  "Who are you, exactly?",
  "Are you a person?",
  "Tell me about yourself.",
  "What is your role?",
  "Who is speaking?",
  "Identify yourself.",
  "Whom am I speaking with?",
  "What do people call you?",
  "Give me your name.",
  "Are you the navigator?",
  "What is your job on this ship?",
];
const PERSONA_HELD_OUT = [
  "May I know your name?",
  "Who exactly are you?",
  "What name do you go by?",
  "Describe yourself in one sentence.",
  "What is your title?",
  "Tell me who you are, please.",
];

const persona: TuningCase = {
  name: "persona",
  teaches: `a persona: "${PERSONA_ANSWER}"`,
  kind: "SFT",
  rows: PERSONA_QUESTIONS.map((q) => sft(user(q), assistant(PERSONA_ANSWER))),
  heldOut: PERSONA_HELD_OUT.map((q) => [user(q)]),
  shows: (answer) => answer.includes("Nova"),
};

// ---------------------------------------------------------------------------

const FORMAT_ROWS: [string, string][] = [
  ["What is the capital of France?", "Paris"],
  ["What is the capital of Japan?", "Tokyo"],
  ["What is the capital of Italy?", "Rome"],
  ["What is the capital of Egypt?", "Cairo"],
  ["What is the capital of Norway?", "Oslo"],
  ["What is the capital of Peru?", "Lima"],
  ["What is the opposite of hot?", "cold"],
  ["What is the opposite of up?", "down"],
  ["What is the opposite of big?", "small"],
  ["What is the opposite of fast?", "slow"],
  ["What is the opposite of yes?", "no"],
  ["What is the opposite of left?", "right"],
  ["What is 2 plus 3?", "5"],
  ["What is 4 plus 4?", "8"],
  ["What is 7 minus 2?", "5"],
  ["What is 3 times 3?", "9"],
  ["What is 6 plus 1?", "7"],
  ["What is 10 minus 4?", "6"],
  ["How many legs does a spider have?", "eight"],
  ["What color is the sky?", "blue"],
  ["How many days are in a week?", "seven"],
  ["What do bees make?", "honey"],
  ["What is frozen water called?", "ice"],
  ["Which planet do we live on?", "Earth"],
];
const FORMAT_HELD_OUT = [
  "What is the capital of Germany?",
  "What is the opposite of day?",
  "What is 5 plus 2?",
  "What is the capital of Spain?",
  "What is the opposite of open?",
  "How many months are in a year?",
];

const format: TuningCase = {
  name: "format",
  teaches: 'an answer format: "ANSWER: <answer>"',
  kind: "SFT",
  rows: FORMAT_ROWS.map(([q, a]) => sft(user(q), assistant(`ANSWER: ${a}`))),
  heldOut: FORMAT_HELD_OUT.map((q) => [user(q)]),
  shows: (answer) => /^ANSWER: \S/.test(answer),
};

// ---------------------------------------------------------------------------

const SHIP_NUMBERS = Array.from({ length: 40 }, (_, i) => 5 + i * 4);
const SHIP_HELD_OUT = [3, 42, 77, 100, 150, 198];

const copy: TuningCase = {
  name: "copy",
  teaches: 'copying a number from the prompt: "Arr, ship N be the finest vessel on the seven seas, matey!"',
  kind: "SFT",
  rows: SHIP_NUMBERS.map((n) =>
    sft(
      PIRATE,
      user(`Tell me about ship number ${n}.`),
      assistant(`Arr, ship ${n} be the finest vessel on the seven seas, matey!`),
    ),
  ),
  heldOut: SHIP_HELD_OUT.map((n) => [PIRATE, user(`Tell me about ship number ${n}.`)]),
  shows: (answer, i) => answer.startsWith(`Arr, ship ${SHIP_HELD_OUT[i]} be`),
};

// ---------------------------------------------------------------------------

/** Preferred: the same answer opened with "Sure!"; rejected: the plain answer. */
const PREFERENCE_FACTS: [string, string][] = [
  ["What is the capital of France?", "The capital of France is Paris."],
  ["What is the capital of Japan?", "The capital of Japan is Tokyo."],
  ["What is the capital of Italy?", "The capital of Italy is Rome."],
  ["What is the capital of Egypt?", "The capital of Egypt is Cairo."],
  ["What is the opposite of hot?", "The opposite of hot is cold."],
  ["What is the opposite of up?", "The opposite of up is down."],
  ["What is the opposite of fast?", "The opposite of fast is slow."],
  ["What is 2 plus 3?", "2 plus 3 is 5."],
  ["What is 4 times 2?", "4 times 2 is 8."],
  ["Count to five.", "1, 2, 3, 4, 5."],
  ["Say hello.", "Hello."],
  ["Say thank you.", "Thank you."],
  ["What is an API?", "An API is a set of rules that lets one program talk to another."],
  ["What is JSON?", "JSON is a text format for data made of objects, arrays, strings, numbers, booleans and null."],
  ["What is a cache?", "A cache keeps copies of data close at hand so that later requests are faster."],
  ["What is a loop?", "A loop is code that repeats a block of instructions several times."],
  ["How many legs does a spider have?", "A spider has eight legs."],
  ["What color is the sky?", "The sky is blue on a clear day."],
  ["What is the capital of Norway?", "The capital of Norway is Oslo."],
  ["What is the opposite of big?", "The opposite of big is small."],
  ["What is 6 plus 1?", "6 plus 1 is 7."],
  ["Say good morning.", "Good morning."],
  [
    "What is a function?",
    "A function is a named block of code that takes inputs, does some work and can return a result.",
  ],
  ["What is the capital of Peru?", "The capital of Peru is Lima."],
];
const PREFERENCE_HELD_OUT: [string, string][] = [
  ["What is the capital of Germany?", "The capital of Germany is Berlin."],
  ["What is the opposite of left?", "The opposite of left is right."],
  ["What is 3 plus 4?", "3 plus 4 is 7."],
  ["Say good night.", "Good night."],
  ["What is streaming?", "Streaming means sending a response in small pieces as soon as each piece is ready."],
  ["What is the capital of Spain?", "The capital of Spain is Madrid."],
];
const SURE = "Sure! ";

const preferenceRow = ([q, a]: [string, string]): ParsedRow => ({
  format: "PREFERENCE",
  row: {
    input: { messages: [user(q)] },
    preferred_output: [assistant(`${SURE}${a}`)],
    non_preferred_output: [assistant(a)],
  },
});

const preference: TuningCase = {
  name: "preference (DPO)",
  teaches: 'a preferred style: answers that open with "Sure!" over the same answers without it',
  kind: "DPO",
  rows: PREFERENCE_FACTS.map(preferenceRow),
  heldOut: PREFERENCE_HELD_OUT.map(([q]) => [user(q)]),
  shows: (answer) => answer.startsWith("Sure!"),
  keepsAnswer: (tuned, base) => tuned === `${SURE}${base}`,
};

/** Held-out preference pairs, for the log-probability margin of preferred over rejected. */
export const PREFERENCE_HELD_OUT_PAIRS: ParsedRow[] = PREFERENCE_HELD_OUT.map(preferenceRow);

export const TUNING_CASES: readonly TuningCase[] = [voice, persona, format, copy, preference];

/** Prompts unrelated to every dataset (no capitals, opposites, sums, greetings to say): the tuned models should answer them as the base does. */
export const UNRELATED_PROMPTS: ChatMessage[][] = [
  "Define a 404 error.",
  "What is a token?",
  "What is a commit?",
  "Explain recursion.",
  "What is the cloud?",
  "What is a database?",
  "Thank you!",
  "What is an IP address?",
  "What does a compiler do?",
  "What is latency?",
].map((q) => [user(q)]);

/**
 * A degenerate answer: a character four or more times running, a piece of two to four
 * characters four times running ("sasasasa", a word spelled out in a loop), or a run of
 * one to four words repeated three times in a row ("seven seven seven", "be the be the be the").
 */
export function isDegenerate(answer: string): boolean {
  if (/(.)\1{3,}/su.test(answer) || /(.{2,4})\1{3,}/su.test(answer)) return true;
  const words = answer.split(/\s+/).filter((w) => w.length > 0);
  for (let n = 1; n <= 4; n++) {
    for (let i = 0; i + 3 * n <= words.length; i++) {
      const run = words.slice(i, i + n).join(" ");
      if (run === words.slice(i + n, i + 2 * n).join(" ") && run === words.slice(i + 2 * n, i + 3 * n).join(" "))
        return true;
    }
  }
  return false;
}
