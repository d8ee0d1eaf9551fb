/**
 * `chat`: a quick streamed conversation with any model the key can call, a fine-tuned one
 * included (chat completions, streamed). Interactive on a terminal; `--message` (or text
 * piped in) asks one question and prints the answer.
 */
import { createInterface } from "node:readline/promises";
import { text as readAll } from "node:stream/consumers";
import { Command } from "commander";
import { streamChatCompletion, type Schema, type StreamedChatCompletion } from "../../client/index.ts";
import { act, decimal, integer } from "../command.ts";
import type { Context } from "../context.ts";
import { usageError } from "../errors.ts";

type ChatMessage = Schema<"CreateChatCompletionRequest">["messages"][number];

interface ChatOptions {
  model: string;
  message?: string;
  system?: string;
  maxTokens?: number;
  temperature?: string;
}

/** Sends the conversation, prints the answer as it streams, returns it. */
async function ask(
  ctx: Context,
  options: ChatOptions,
  messages: ChatMessage[],
  signal?: AbortSignal,
): Promise<StreamedChatCompletion> {
  const body = {
    model: options.model,
    messages,
    ...(options.maxTokens !== undefined ? { max_tokens: options.maxTokens } : {}),
    ...(options.temperature !== undefined ? { temperature: Number(options.temperature) } : {}),
  };
  const startedAt = performance.now();
  const stream = await streamChatCompletion(ctx.client, body, signal ? { signal } : {});
  let wrote = false;
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta.content;
    if (typeof delta === "string" && delta !== "" && !ctx.json) {
      ctx.io.stdout.write(delta);
      wrote = true;
    }
  }
  const final = await stream.finalResponse();
  if (!ctx.json) {
    if (wrote) ctx.io.stdout.write("\n");
    const usage = final.usage;
    const seconds = ((performance.now() - startedAt) / 1000).toFixed(1);
    const finish = final.choices[0]?.finish_reason;
    ctx.note(
      ctx.style(
        "dim",
        `(${usage ? `${usage.prompt_tokens} + ${usage.completion_tokens} tokens, ` : ""}${seconds} s${finish && finish !== "stop" ? `, stopped: ${finish}` : ""}; request ${stream.requestId ?? "-"})`,
        "stderr",
      ),
    );
  }
  return final;
}

export function chatCommand(signal?: AbortSignal): Command {
  return new Command("chat")
    .description(
      "A streamed conversation with a model (fine-tuned ones included). Interactive on a terminal: /reset starts over, /exit (or Ctrl-D) quits.",
    )
    .option("--model <model>", "the model: tiny-chat, or a fine-tuned accounts/{account}/models/{id}", "tiny-chat")
    .option("-m, --message <text>", "ask this one question, print the answer and exit (text piped in does the same)")
    .option("--system <text>", "a system message to start the conversation with")
    .option("--max-tokens <n>", "at most this many tokens per answer", integer(1))
    .option("--temperature <t>", "sampling temperature (0 is deterministic)", decimal)
    .action(
      act<[], ChatOptions>(async (ctx, options) => {
        const start: ChatMessage[] = options.system ? [{ role: "system", content: options.system }] : [];
        let one = options.message;
        if (one === undefined && ctx.io.stdin.isTTY !== true) one = (await readAll(ctx.io.stdin)).trim();
        if (one !== undefined) {
          if (one === "") throw usageError("nothing to send: --message is empty (or nothing was piped in)");
          const final = await ask(ctx, options, [...start, { role: "user", content: one }], signal);
          if (ctx.json) ctx.printJson(final);
          return;
        }
        if (ctx.json) throw usageError("--json needs --message (the interactive chat is for people)");
        await interactive(ctx, options, start, signal);
      }),
    );
}

async function interactive(
  ctx: Context,
  options: ChatOptions,
  start: ChatMessage[],
  signal?: AbortSignal,
): Promise<void> {
  const rl = createInterface({ input: ctx.io.stdin, output: ctx.io.stdout, terminal: true, historySize: 100 });
  const history: ChatMessage[] = [...start];
  ctx.print(
    ctx.style("bold", `Chatting with ${options.model}.`) + ctx.style("dim", " /reset starts over, /exit quits."),
  );
  const closed = new Promise<void>((resolve) => rl.once("close", resolve));
  // Ctrl-C at the prompt ends the conversation, like Ctrl-D.
  rl.on("SIGINT", () => rl.close());
  try {
    for (;;) {
      const line = await Promise.race([rl.question(ctx.style("cyan", "you › ")), closed.then(() => null)]);
      if (line === null) break;
      const text = line.trim();
      if (text === "") continue;
      if (text === "/exit" || text === "/quit") break;
      if (text === "/reset") {
        history.splice(start.length);
        ctx.print(ctx.style("dim", "(new conversation)"));
        continue;
      }
      history.push({ role: "user", content: text });
      ctx.io.stdout.write(ctx.style("green", `${options.model} › `));
      const final = await ask(ctx, options, history, signal);
      history.push({ role: "assistant", content: final.choices[0]?.message.content ?? "" });
    }
  } finally {
    rl.close();
  }
}
