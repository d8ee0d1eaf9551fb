/**
 * The terminal commands as a person sees them: each test types into a tmux session (a
 * real terminal, 120×45) and reads the screen with capture-pane. The upload's progress
 * bar with bytes and rate, the confirmation prompt, the watch's progress bar and live
 * loss curve redrawn in place, the interactive chat, Ctrl-C.
 *
 * Skipped without tmux, unless REQUIRE_TMUX=1 (then a missing tmux fails).
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, test } from "vitest";
import { skipping } from "../support/skip.ts";
import { ahoyRows, jsonl } from "../finetune/fixtures.ts";
import type { TestServer } from "../../harness/test-server.ts";
import {
  cli,
  commandLine,
  createJob,
  json,
  NO_TMUX,
  scratchDir,
  startCliServer,
  Terminal,
  userEnv,
} from "./helpers.ts";

if (NO_TMUX && process.env.REQUIRE_TMUX === "1")
  throw new Error("REQUIRE_TMUX=1 but tmux is not installed (scripts/install-system-packages.sh installs it)");

let server: TestServer;
let terminal: Terminal;
let env: Record<string, string>;
const scratch = scratchDir("cli-terminal-");

beforeAll(async () => {
  if (NO_TMUX) return;
  server = await startCliServer();
  env = userEnv(server);
  // Colours on, as in a real terminal (the screen capture has none).
  const { NO_COLOR: _, ...withColour } = env;
  terminal = await Terminal.open(withColour, { width: 120, height: 45 }, scratch.dir);
});
afterAll(async () => {
  terminal?.close();
  await server?.close();
  scratch.remove();
});

/** The exit code of the last command, asked of the shell as a person would. */
async function exitCode(t: Terminal): Promise<number> {
  const marker = `rc-${Math.random().toString(36).slice(2, 7)}`;
  t.run(`echo "${marker}=$?"`);
  const screen = await t.waitFor(new RegExp(`^${marker}=(\\d+)$`, "m"), 10_000);
  return Number(new RegExp(`^${marker}=(\\d+)$`, "m").exec(screen)?.[1]);
}

function clear(t: Terminal): void {
  t.run("clear");
  t.tmux(["clear-history", "-t", t.name]);
}

describe("in a terminal", { skip: skipping(NO_TMUX) }, () => {
  test("upload: a progress bar with bytes and rate, then the validation counts", async () => {
    clear(terminal);
    // About 3 MB, so the bar has something to count.
    writeFileSync(path.join(scratch.dir, "big.jsonl"), jsonl(ahoyRows(30_000)));
    terminal.run(commandLine("datasets upload big big.jsonl --create"));
    const screen = await terminal.waitFor(/^Ready: /m, 60_000);
    assert.match(
      screen,
      /Uploading big\.jsonl \[█+\] 100% \| [\d.]+ MiB \/ [\d.]+ MiB \| [\d.]+ [KMG]iB\/s \| ETA/,
      "the bar, full, with bytes sent of total and the rate",
    );
    assert.match(screen, /Uploaded big\.jsonl as version 1 of big: [\d.]+ MiB in [\d.]+ s \([\d.]+ [KMG]iB\/s\)/);
    assert.match(screen, /^Ready: 30,000 lines, 30,000 valid rows, [\d,]+ tokens, format SFT$/m);
    assert.equal(await exitCode(terminal), 0);
  });

  test("jobs create asks before the billable run; watch draws the progress bar and a live loss curve, and ends with the output model", async () => {
    writeFileSync(path.join(scratch.dir, "ahoy.jsonl"), jsonl(ahoyRows(80)));
    const upload = await cli(["datasets", "upload", "ahoy", path.join(scratch.dir, "ahoy.jsonl"), "--create"], { env });
    assert.equal(upload.code, 0, upload.stderr);

    clear(terminal);
    // Two short epochs at a high rate: enough for the chat below to answer in the tuned style, quick for a terminal test.
    terminal.run(
      commandLine(
        "jobs create --base-model tiny-chat --dataset ahoy --output-model ahoy-chat --epochs 2 --learning-rate 0.01 --batch-size 4 --eval-split 10 --watch --interval 0.25",
      ),
    );
    const prompt = await terminal.waitFor(/\[y\/N\]\s*$/m, 20_000);
    assert.match(prompt, /estimated cost\s+[\d.]+ USD/, "the working is on the screen before the question");
    assert.match(prompt, /Start this billable job \(estimated [\d.]+ USD\)\? \[y\/N\]/);
    terminal.run("y");

    // While it runs: the chart and the bar part-way, redrawn in place (one bar on the screen).
    const frames: string[] = [];
    const done = await terminal.waitFor(/^Output model: /m, 120_000, (screen) => {
      if (/RUNNING +epoch \d\/2 \[[█░]+\] +([1-9]|[1-9]\d)% \|/.test(screen)) frames.push(screen);
    });
    assert.ok(frames.length > 0, `a frame with the job part-way was on the screen; the end was:\n${done}`);
    const mid = frames[Math.floor(frames.length / 2)] as string;
    assert.match(mid, /Job sft-[0-9a-f]+ \(SFT\): (?:accounts\/maas\/models\/)?tiny-chat → ahoy-chat/);
    assert.match(mid, /loss +── training/, "the chart's legend");
    assert.ok((mid.match(/^ *\d+\.\d{3}[┤┼]/gm) ?? []).length >= 10, `the chart's y axis, one label per row:\n${mid}`);
    assert.match(mid, /[╭╮╰╯─]/, "the curve itself");
    assert.match(mid, /RUNNING +epoch [12]\/2 \[[█░]+\] +\d+% \| [\d,]+ tokens \| loss [\d.]+/);
    assert.equal((mid.match(/epoch \d\/2 \[/g) ?? []).length, 1, "the bar is redrawn in place, not printed again");

    // The whole status line, to its elapsed time, within the terminal's 120 columns (issue 42: it was cut).
    assert.match(
      done,
      /SUCCEEDED +epoch 2\/2 \[█+\] 100% \| [\d,]+ tokens \| loss [\d.]+ \(eval [\d.]+\) \| \d+[hms][\dms]*$/m,
    );
    assert.match(done, /── evaluation/, "evaluation loss joins the legend once measured");
    assert.match(done, /^Succeeded: job sft-[0-9a-f]+, [\d,]+ tokens trained\.$/m);
    assert.match(done, /^Output model: accounts\/acme\/models\/ahoy-chat$/m);
    assert.equal(await exitCode(terminal), 0);
  });

  test("answering no at the prompt creates nothing: exit 10", async () => {
    clear(terminal);
    terminal.run(commandLine("jobs create --base-model tiny-chat --dataset ahoy --output-model never-made"));
    await terminal.waitFor(/\[y\/N\]\s*$/m, 20_000);
    terminal.run("n");
    await terminal.waitFor(/cancelled: nothing was done/, 10_000);
    assert.equal(await exitCode(terminal), 10);
    const jobs = json(await cli(["--json", "jobs", "list"], { env }));
    assert.ok(!jobs.some((j: { config: { outputModelId: string } }) => j.config.outputModelId === "never-made"));
  });

  test("chat: an interactive, streamed conversation with the fine-tuned model", async () => {
    clear(terminal);
    terminal.run(commandLine("chat --model accounts/acme/models/ahoy-chat --temperature 0"));
    await terminal.waitFor(/^you ›\s*$/m, 20_000);
    terminal.run("Hello! Tell me about the sea.");
    const answered = await terminal.waitFor(
      /\(\d+ \+ \d+ tokens, [\d.]+ s; request req_[0-9a-f]+\)\n(.|\n)*you ›\s*$/m,
      30_000,
    );
    assert.match(answered, /^Chatting with accounts\/acme\/models\/ahoy-chat\./m);
    assert.match(answered, /^accounts\/acme\/models\/ahoy-chat › .*(Ahoy|matey)/m, "the answer, in the tuned style");
    terminal.run("/exit");
    assert.equal(await exitCode(terminal), 0);
  });

  test("Ctrl-C stops watching (exit 130) and leaves the job running", async () => {
    const job = await createJob(env, "ahoy", "long-run", "--epochs", "50", "--batch-size", "1");
    try {
      clear(terminal);
      terminal.run(commandLine(`jobs watch ${job.jobId} --interval 0.25`));
      await terminal.waitFor(/RUNNING +epoch \d+\/50 \[/, 60_000);
      terminal.press("C-c");
      await terminal.waitFor(/^interrupted$/m, 10_000);
      assert.equal(await exitCode(terminal), 130);
      const still = json(await cli(["--json", "jobs", "get", job.jobId], { env }));
      assert.ok(["JOB_STATE_RUNNING", "JOB_STATE_CHECKPOINTING"].includes(still.state), still.state);
    } finally {
      await cli(["jobs", "cancel", job.jobId], { env });
    }
  });
});
