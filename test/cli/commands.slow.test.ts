/**
 * The CLI as scripts use it: a child process against the reference server, settings in
 * the environment, results on stdout (plain or --json), errors on stderr with the code,
 * the message and the request id, and exit codes to branch on.
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, test } from "vitest";
import { Writable } from "node:stream";
import { allCommands, buildProgram, run } from "../../cli/program.ts";
import { accountFromKey, type Io } from "../../cli/context.ts";
import { EXIT } from "../../cli/errors.ts";
import { ahoyPreferenceRows, ahoyRows, jsonl } from "../finetune/fixtures.ts";
import type { TestServer } from "../../harness/test-server.ts";
import { freePort } from "../../harness/listen.ts";
import { cli, createJob, json, piped, scratchDir, startCliServer, userEnv } from "./helpers.ts";

let server: TestServer;
let env: Record<string, string>;
const scratch = scratchDir("cli-test-");
const file = (name: string) => path.join(scratch.dir, name);

beforeAll(async () => {
  server = await startCliServer();
  env = userEnv(server);
  writeFileSync(file("ahoy.jsonl"), jsonl(ahoyRows(60)));
  writeFileSync(file("prefs.jsonl"), jsonl(ahoyPreferenceRows(16)));
  const rows = ahoyRows(8);
  rows.splice(5, 0, { messages: [] });
  writeFileSync(file("bad.jsonl"), jsonl(rows));
});
afterAll(async () => {
  await server?.close();
  scratch.remove();
});

/** An in-memory terminal-less I/O for running the program in-process. */
function memoryIo(): Io & { out: () => string; err: () => string } {
  let out = "";
  let err = "";
  const sink = (append: (s: string) => void) =>
    new Writable({
      write(chunk, _encoding, callback) {
        append(String(chunk));
        callback();
      },
    });
  return {
    stdout: sink((s) => (out += s)),
    stderr: sink((s) => (err += s)),
    stdin: process.stdin,
    env: {},
    out: () => out,
    err: () => err,
  };
}

describe("the command line", () => {
  test("every command has --help, which exits 0 and shows its usage", async () => {
    const program = buildProgram(memoryIo());
    const paths = allCommands(program)
      .filter((c) => c.name() !== "help")
      .map((c) => {
        const names: string[] = [];
        for (let x: typeof c | null = c; x && x.parent; x = x.parent as typeof c) names.unshift(x.name());
        return names;
      });
    // The commands issue 10 asks for, at least.
    for (const expected of [
      "datasets create",
      "datasets upload",
      "datasets validate",
      "datasets get",
      "datasets list",
      "datasets delete",
      "jobs estimate",
      "jobs create",
      "jobs list",
      "jobs get",
      "jobs cancel",
      "jobs watch",
      "jobs metrics",
      "models list",
      "chat",
      "conformance run",
      "conformance record",
    ]) {
      assert.ok(
        paths.some((p) => p.join(" ") === expected),
        `no command ${expected}`,
      );
    }
    for (const p of paths) {
      const io = memoryIo();
      const code = await run([...p, "--help"], io);
      assert.equal(code, 0, `${p.join(" ")} --help exited ${code}: ${io.err()}`);
      assert.match(io.out(), new RegExp(`^Usage: itk ${p.join(" ")}`.trim()), `${p.join(" ")} --help`);
    }
  });

  test("wrong command lines are usage errors: exit 2", async () => {
    for (const args of [
      ["bogus"],
      ["datasets"],
      ["jobs", "estimate", "--dataset", "x"],
      ["jobs", "create", "--epochs", "zero"],
      ["jobs", "list", "--type", "ppo"],
    ]) {
      const result = await cli(args, { env });
      assert.equal(result.code, EXIT.USAGE, `${args.join(" ")}: ${result.stderr}`);
      assert.equal(result.stdout, "", args.join(" "));
    }
  });

  test("settings come from flags or the environment; a missing key says how to set it", async () => {
    const noKey = await cli(["datasets", "list"], { env: { SERVICE_BASE_URL: server.baseUrl } });
    assert.equal(noKey.code, EXIT.USAGE);
    assert.match(noKey.stderr, /no API key: pass --api-key or set SERVICE_API_KEY/);
    const flags = await cli([
      "--base-url",
      server.baseUrl,
      "--api-key",
      server.keys.globex as string,
      "--json",
      "datasets",
      "list",
    ]);
    assert.equal(flags.code, 0, flags.stderr);
    assert.deepEqual(json(flags), []);
    assert.equal(accountFromKey("sk-dev-acme-00000000000000000000000000000000"), "acme");
    assert.equal(accountFromKey(`sk-my-team-${"ab".repeat(32)}`), "my-team");
    assert.equal(accountFromKey("not-a-key"), null);
  });

  test("an API error prints its code, message and request id, never a stack, and exits by its class", async () => {
    const bad = await cli(["--account", "acme", "datasets", "list"], {
      env: { ...env, SERVICE_API_KEY: "sk-dev-nobody-00000000000000000000000000000000" },
    });
    assert.equal(bad.code, EXIT.AUTH);
    assert.match(bad.stderr, /^error: INVALID_API_KEY \(401 authentication_error\): /m);
    assert.match(bad.stderr, /request id: req_[0-9a-f]+/);
    assert.doesNotMatch(bad.stderr, /\bat .+\.ts:\d+/, "no stack trace without --debug");

    const debug = await cli(["--debug", "--account", "acme", "datasets", "list"], {
      env: { ...env, SERVICE_API_KEY: "sk-dev-nobody-00000000000000000000000000000000" },
    });
    assert.equal(debug.code, EXIT.AUTH);
    assert.match(debug.stderr, /\[debug\] ← 401 GET .*\/accounts\/acme\/datasets/);
    assert.match(debug.stderr, /ApiError: .*\n\s+at /, "--debug shows the stack");

    const asJson = await cli(["--json", "datasets", "get", "no-such-dataset"], { env });
    assert.equal(asJson.code, EXIT.NOT_FOUND);
    const error = JSON.parse(asJson.stderr).error;
    assert.equal(error.code, "NOT_FOUND");
    assert.equal(error.status, 404);
    assert.match(error.requestId, /^req_/);

    const suspended = await cli(["models", "list"], { env: userEnv(server, "initech") });
    assert.equal(suspended.code, EXIT.AUTH);
    assert.match(suspended.stderr, /TENANT_SUSPENDED/);

    const port = await freePort(); // nothing listens on it
    const unreachable = await cli(["models", "list"], {
      env: { ...env, SERVICE_BASE_URL: `http://127.0.0.1:${port}/v1` },
    });
    assert.equal(unreachable.code, EXIT.UNAVAILABLE);
    assert.match(unreachable.stderr, new RegExp(`cannot reach http://127\\.0\\.0\\.1:${port}/v1 \\(ECONNREFUSED\\)`));
  });
});

describe("datasets", () => {
  test("create, upload, validate: the counts; get, list, delete", async () => {
    const created = await cli(["datasets", "create", "ahoy", "--display-name", "Ahoy rows"], { env });
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /Created accounts\/acme\/datasets\/ahoy/);

    const uploaded = await cli(["datasets", "upload", "ahoy", file("ahoy.jsonl")], { env });
    assert.equal(uploaded.code, 0, uploaded.stderr);
    assert.match(
      uploaded.stderr,
      /Uploaded ahoy\.jsonl as version 1 of ahoy: [\d.]+ KiB in [\d.]+ s \([\d.]+ [KM]iB\/s\)/,
    );
    assert.match(uploaded.stdout, /^Ready: 60 lines, 60 valid rows, [\d,]+ tokens, format SFT$/m);
    assert.match(uploaded.stdout, /^Version: accounts\/acme\/datasets\/ahoy\/versions\/1$/m);

    // --create makes the dataset on the way; --json gives the validated version.
    const second = json(
      await cli(["--json", "datasets", "upload", "ahoy-two", file("ahoy.jsonl"), "--create"], { env }),
    );
    assert.equal(second.dataset.state, "DATASET_STATE_READY");
    assert.equal(second.version.exampleCount, "60");

    const again = await cli(["datasets", "validate", "ahoy"], { env });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /Ready: 60 lines/);

    const shown = await cli(["datasets", "get", "ahoy"], { env });
    assert.match(shown.stdout, /display name\s+Ahoy rows/);
    assert.match(shown.stdout, /^1\s+READY\s+SFT\s+60\s+/m);

    const listed = json(await cli(["--json", "datasets", "list", "--state", "READY"], { env }));
    assert.deepEqual(listed.map((d: { datasetId: string }) => d.datasetId).sort(), ["ahoy", "ahoy-two"]);

    const refused = await cli(["datasets", "delete", "ahoy-two"], { env });
    assert.equal(refused.code, EXIT.USAGE, "no terminal to ask on, no --yes: nothing is deleted");
    assert.match(refused.stderr, /refusing without --yes/);
    const deleted = await cli(["datasets", "delete", "ahoy-two", "--yes"], { env });
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.match(deleted.stdout, /Deleted accounts\/acme\/datasets\/ahoy-two \(DELETED\)/);
  });

  test("a bad file: the first bad line with its number and reason, exit 8", async () => {
    const result = await cli(["datasets", "upload", "broken", file("bad.jsonl"), "--create"], { env });
    assert.equal(result.code, EXIT.FAILED, result.stderr);
    assert.match(result.stderr, /^error: validation failed at line 6: .*messages/m);
    assert.doesNotMatch(result.stderr, /line 6: line 6/);
    const shown = await cli(["datasets", "get", "broken"], { env });
    assert.match(shown.stdout, /FAILED .*line 6: /);
  });

  test("a file that is not there: exit 1 with the reason", async () => {
    await cli(["datasets", "create", "empty"], { env });
    const result = await cli(["datasets", "upload", "empty", file("missing.jsonl")], { env });
    assert.equal(result.code, EXIT.ERROR);
    assert.match(result.stderr, /cannot read .*missing\.jsonl: ENOENT/);
  });
});

describe("jobs, models, chat", () => {
  let jobId: string;

  test("estimate prints the working", async () => {
    await cli(["datasets", "upload", "tune", file("ahoy.jsonl"), "--create"], { env });
    const result = await cli(
      [
        "jobs",
        "estimate",
        "--base-model",
        "tiny-chat",
        "--dataset",
        "tune",
        "--output-model",
        "tune-chat",
        "--epochs",
        "2",
      ],
      { env },
    );
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stdout,
      /^Cost estimate \(SFT\): accounts\/maas\/models\/tiny-chat on accounts\/acme\/datasets\/tune$/m,
      "a bare id is sent as the full resource name",
    );
    assert.match(result.stdout, /examples\s+60$/m);
    assert.match(result.stdout, /epochs\s+2$/m);
    assert.match(result.stdout, /tokens processed\s+[\d,]+ +\(tokens of the examples that fit × 2 epochs\)/);
    assert.match(result.stdout, /estimated cost\s+[\d.]+ USD +\(= [\d,]+ × 0\.50 \/ 1,000,000\)/);
    const estimate = json(
      await cli(
        [
          "--json",
          "jobs",
          "estimate",
          "--base-model",
          "accounts/maas/models/tiny-chat",
          "--dataset",
          "tune@1",
          "--output-model",
          "tune-chat",
        ],
        { env },
      ),
    );
    assert.equal(estimate.estimate.exampleCount, "60");
    const notAModel = await cli(
      [
        "jobs",
        "estimate",
        "--base-model",
        "accounts/acme/models/tune-chat",
        "--dataset",
        "tune",
        "--output-model",
        "x",
      ],
      { env },
    );
    assert.equal(notAModel.code, EXIT.USAGE);
    assert.match(notAModel.stderr, /not a base model: accounts\/acme\/models\/tune-chat/);
    // --eval-split says what it will create; the help says who chooses what is left out.
    const split = await cli(
      [
        "jobs",
        "estimate",
        "--base-model",
        "tiny-chat",
        "--dataset",
        "tune",
        "--output-model",
        "x",
        "--eval-split",
        "20",
      ],
      { env },
    );
    assert.match(
      split.stdout,
      /evaluation\s+20 % of the rows held out \(not trained on\), saved as a new dataset <job id>-eval/,
    );
    const help = (await cli(["jobs", "create", "--help"], { env })).stdout.replace(/\s+/g, " ");
    assert.match(
      help,
      /--epochs <n> passes over the data, 1 to 100 \(default: chosen by the base model for at least 80 optimisation steps, shown by jobs estimate\)/,
    );
    assert.doesNotMatch(help, /passes over the data, 1 to 100 \(default 1\)/);
  });

  test("create asks before a billable run: without a terminal and without --yes it refuses and creates nothing", async () => {
    const result = await cli(
      ["jobs", "create", "--base-model", "tiny-chat", "--dataset", "tune", "--output-model", "tune-chat"],
      { env },
    );
    assert.equal(result.code, EXIT.USAGE);
    assert.match(result.stdout, /Cost estimate/, "the working is printed first");
    assert.match(result.stderr, /Start this billable job \(estimated [\d.]+ USD\): refusing without --yes/);
    assert.deepEqual(json(await cli(["--json", "jobs", "list"], { env })), []);
  });

  test("create --yes, then watch to the end: the output model's name", async () => {
    const created = await createJob(
      env,
      "tune",
      "tune-chat",
      "--epochs",
      "2",
      "--learning-rate",
      "0.01",
      "--batch-size",
      "4",
      "--eval-split",
      "20",
    );
    assert.equal(created.jobType, "JOB_TYPE_SFT");
    jobId = created.jobId;
    const watched = await cli(["jobs", "watch", jobId, "--interval", "0.2"], { env });
    assert.equal(watched.code, 0, watched.stderr);
    assert.match(
      watched.stderr,
      /SUCCEEDED epoch 2\/2 100% [\d,]+ tokens loss [\d.]+ \(eval [\d.]+\)/,
      "a plain line per change without a terminal",
    );
    assert.match(watched.stdout, /^Output model: accounts\/acme\/models\/tune-chat$/m);

    const got = json(await cli(["--json", "jobs", "get", jobId], { env }));
    assert.equal(got.state, "JOB_STATE_SUCCEEDED");
    const shown = await cli(["jobs", "get", `accounts/acme/trainingJobs/${jobId}`], { env });
    assert.match(shown.stdout, /state\s+SUCCEEDED/);
    assert.match(shown.stdout, /output model\s+accounts\/acme\/models\/tune-chat/);
    const listed = await cli(["jobs", "list", "--state", "SUCCEEDED"], { env });
    assert.match(listed.stdout, new RegExp(`^${jobId}\\s+SFT\\s+SUCCEEDED\\s+100%`, "m"));

    const cancel = await cli(["jobs", "cancel", jobId], { env });
    assert.equal(cancel.code, EXIT.REJECTED, "a finished job cannot be cancelled: 409");
    assert.match(cancel.stderr, /JOB_STATE_INVALID \(409/);
  });

  test("metrics: a table, JSON, and a chart file", async () => {
    const table = await cli(["jobs", "metrics", jobId], { env });
    assert.match(table.stdout, /^STEP\s+EPOCH\s+LOSS\s+EVAL LOSS/m);
    assert.match(table.stdout, /training points, 2 of 2 evaluation points; complete/);
    const curve = json(await cli(["--json", "jobs", "metrics", jobId], { env }));
    assert.ok(curve.points.length > 2);
    assert.deepEqual(
      json(await cli(["--json", "jobs", "metrics", "latest"], { env })),
      curve,
      "latest is the newest job",
    );
    const svg = await cli(["jobs", "metrics", jobId, "--plot", file("loss.svg")], { env });
    assert.equal(svg.code, 0, svg.stderr);
    const text = readFileSync(file("loss.svg"), "utf8");
    assert.match(text, /^<svg/);
    for (const label of ["Training step", "Loss", "training", "evaluation", "epoch 2", `Loss of job ${jobId}`])
      assert.ok(text.includes(`>${label}<`), `the chart has the text ${label}`);
    const wrong = await cli(["jobs", "metrics", jobId, "--plot", file("loss.pdf")], { env });
    assert.equal(wrong.code, EXIT.USAGE);
  });

  test("metrics latest skips newer jobs without training steps (a failed one here; the conformance kit leaves a cancelled one) and says which job it picked", async () => {
    // The newest job now has no step at all: every example is longer than its context, so it fails before training.
    const empty = await createJob(env, "tune", "no-steps", "--max-context-length", "1");
    const ended = await cli(["jobs", "watch", empty.jobId, "--interval", "0.2", "--no-chart"], { env });
    assert.equal(ended.code, EXIT.FAILED, ended.stderr);
    assert.equal(json(await cli(["--json", "jobs", "metrics", empty.jobId], { env })).totalPoints, "0");

    const picked = await cli(["jobs", "metrics", "latest"], { env });
    assert.equal(picked.code, 0, picked.stderr);
    assert.match(
      picked.stderr,
      new RegExp(
        `latest: job ${jobId} \\(SFT, SUCCEEDED, created [^)]+\\), the newest you created with this tool that has training steps; newer without steps: ${empty.jobId}`,
      ),
    );
    assert.match(picked.stdout, /training points, 2 of 2 evaluation points; complete/);
    // get and cancel take the newest job of all, and say so too.
    const got = await cli(["jobs", "get", "latest"], { env });
    assert.match(got.stderr, new RegExp(`latest: job ${empty.jobId} \\(SFT, FAILED`));
  });

  test("output piped into a reader that stops early: no stack trace, exit 0 (EPIPE)", async () => {
    // `| true` closes the pipe before the tool writes, so every write fails; `| head -n 1` closes it after one line.
    for (const reader of ["true", "head -n 1", "true", "head -n 1", "true", "head -n 1"]) {
      const result = await piped(["jobs", "metrics", jobId], reader, env);
      assert.equal(result.code, 0, `${reader}: ${result.stderr}`);
      assert.doesNotMatch(result.stderr, /EPIPE|Error|\n\s+at /, reader);
      if (reader.startsWith("head")) assert.match(result.stdout, /^STEP\s+EPOCH/);
    }
  });

  test("latest is the newest job created with this tool, not one another program made after it", async () => {
    const before = json(await cli(["--json", "jobs", "get", "latest"], { env }));
    // A job made through the API directly (as a conformance run makes them), newer than the tool's.
    const other = await fetch(`${server.baseUrl}/accounts/acme/supervisedFineTuningJobs`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.keys.acme}`, "content-type": "application/json" },
      body: JSON.stringify({
        baseModel: "accounts/maas/models/tiny-chat",
        inputDatasetVersion: "accounts/acme/datasets/tune",
        config: { outputModelId: "made-elsewhere" },
      }),
    });
    assert.equal(other.status, 201);
    const made = (await other.json()) as { jobId: string };
    const listed = json(await cli(["--json", "jobs", "list"], { env }));
    assert.equal(listed[0].jobId, made.jobId, "the other job is the account's newest");
    const picked = await cli(["--json", "jobs", "get", "latest"], { env });
    assert.equal(json(picked).jobId, before.jobId);
    await cli(["jobs", "cancel", made.jobId], { env });
    // Another machine (no memory of created jobs) takes the account's newest, and says so.
    const elsewhere = await cli(["jobs", "get", "latest"], { env: { ...env, XDG_STATE_HOME: file("other-machine") } });
    assert.match(
      elsewhere.stderr,
      new RegExp(`latest: job ${made.jobId} .*the account's newest \\(none created with this tool here\\)`),
    );
  });

  test("metrics --plot writes into a folder that does not exist yet", async () => {
    const target = file(path.join("reports", "nested", "loss.svg"));
    const result = await cli(["jobs", "metrics", "latest", "--plot", target], { env });
    assert.equal(result.code, 0, result.stderr);
    assert.match(readFileSync(target, "utf8"), /^<svg/);
  });

  test("DPO: --dpo estimates, creates and watches a preference job", async () => {
    await cli(["datasets", "upload", "prefs", file("prefs.jsonl"), "--create"], { env });
    const estimate = await cli(
      ["jobs", "estimate", "--dpo", "--base-model", "tiny-chat", "--dataset", "prefs", "--output-model", "prefs-chat"],
      { env },
    );
    assert.match(estimate.stdout, /Cost estimate \(DPO\)/);
    const sftBeta = await cli(
      [
        "jobs",
        "estimate",
        "--dpo-beta",
        "0.2",
        "--base-model",
        "tiny-chat",
        "--dataset",
        "prefs",
        "--output-model",
        "x",
      ],
      { env },
    );
    assert.equal(sftBeta.code, EXIT.USAGE);
    const result = await cli(
      [
        "jobs",
        "create",
        "--type",
        "dpo",
        "--yes",
        "--watch",
        "--interval",
        "0.2",
        "--base-model",
        "tiny-chat",
        "--dataset",
        "prefs",
        "--output-model",
        "prefs-chat",
        "--dpo-beta",
        "0.2",
      ],
      { env },
    );
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /Job dpo-[0-9a-f]+ \(DPO\): (?:accounts\/maas\/models\/)?tiny-chat → prefs-chat/);
    assert.match(result.stdout, /Output model: accounts\/acme\/models\/prefs-chat/);
    const jobs = json(await cli(["--json", "jobs", "list", "--dpo"], { env }));
    assert.equal(jobs.length, 1);
    // Found without saying its type.
    const got = json(await cli(["--json", "jobs", "get", jobs[0].jobId], { env }));
    assert.equal(got.config.dpoBeta, "0.2");
  });

  test("cancel a running job; watch then ends with exit 8", async () => {
    await cli(["datasets", "upload", "long", file("ahoy.jsonl"), "--create"], { env });
    const job = await createJob(env, "long", "long-chat", "--epochs", "50", "--batch-size", "1");
    const cancelled = await cli(["jobs", "cancel", job.jobId], { env });
    assert.equal(cancelled.code, 0, cancelled.stderr);
    assert.match(cancelled.stdout, new RegExp(`Cancelled job ${job.jobId} \\(CANCELLED`));
    const watched = await cli(["jobs", "watch", job.jobId], { env });
    assert.equal(watched.code, EXIT.FAILED);
    assert.match(watched.stderr, /ended CANCELLED/);
  });

  test("models list shows the fine-tuned models; chat answers with one, one-shot or piped", async () => {
    const models = await cli(["models", "list"], { env });
    assert.match(models.stdout, /^tiny-chat\s+maas/m);
    assert.match(models.stdout, /^accounts\/acme\/models\/tune-chat\s+acme/m);
    const answer = await cli(
      [
        "chat",
        "--model",
        "accounts/acme/models/tune-chat",
        "--message",
        "Hello! Tell me about the sea.",
        "--temperature",
        "0",
      ],
      { env },
    );
    assert.equal(answer.code, 0, answer.stderr);
    assert.match(answer.stdout, /Ahoy|matey/, "the tuned model answers in its new style");
    assert.match(answer.stderr, /\(\d+ \+ \d+ tokens, [\d.]+ s; request req_/);
    const piped = await cli(["--json", "chat", "--model", "tiny-chat"], { env, input: "Hello!\n" });
    assert.equal(piped.code, 0, piped.stderr);
    const completion = JSON.parse(piped.stdout);
    assert.equal(completion.object, "chat.completion");
    assert.ok(completion.usage.completion_tokens > 0);
    const missing = await cli(["chat", "--model", "no-such-model", "-m", "hi"], { env });
    assert.equal(missing.code, EXIT.NOT_FOUND);
    assert.match(missing.stderr, /MODEL_NOT_FOUND/);
  });
});
