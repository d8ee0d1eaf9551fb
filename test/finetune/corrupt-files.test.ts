/**
 * Adapter files and trainer checkpoints are checked when read, not cast: a header that
 * lost a field or holds a wrong type fails with an error naming the file and the field
 * (the runner logs it and fails the job as INTERNAL; a deployment logs it and keeps
 * answering its envelope). Each file here is written as the trainer writes it, then its
 * header is rewritten with one fault.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, test, vi } from "vitest";
import { CorruptDataError } from "../../server/checked-json.ts";
import {
  loadCheckpoint,
  serializeCheckpoint,
  type TrainerCheckpoint,
} from "../../server/finetune/trainer-checkpoint.ts";
import { loadAdapter, serializeAdapter, type Adapter } from "../../server/inference/local/lora.ts";
import { readTensorFile, writeTensorFile } from "../../server/inference/local/tensor-file.ts";
import { startTestServer } from "../../harness/test-server.ts";
import { assertError, request } from "../support/http.ts";
import { queuedJob } from "../store/records.ts";

const NO_TOKENS = { bpeIds: [], embeddings: new Float32Array(0), outputs: new Float32Array(0) };

function adapter(): Adapter {
  return {
    matrices: { "layers.0.wq": { A: new Float32Array(4), B: new Float32Array(4), rank: 1, alpha: 2 } },
    tokens: NO_TOKENS,
  };
}

function checkpoint(): TrainerCheckpoint {
  const moments = { "layers.0.wq.A": new Float32Array(4) };
  return {
    kind: "SFT",
    epoch: 1,
    step: 3,
    processedTokens: 120,
    firstLoss: 2.5,
    adapter: adapter(),
    optimizer: {
      step: 3,
      m: moments,
      v: { "layers.0.wq.A": new Float32Array(4) },
      options: { beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, clipNorm: Infinity },
    },
    earlyStop: { bestLoss: 1.5, bestEpoch: 1, bestAdapter: adapter(), stopped: false },
  };
}

/** The same file with its header's meta changed. */
function withMeta(bytes: Uint8Array, change: (meta: Record<string, unknown>) => Record<string, unknown>): Uint8Array {
  const { meta, tensors } = readTensorFile(bytes);
  return writeTensorFile(change(structuredClone(meta)), tensors);
}

/** The same file with its header's JSON text changed (the container's layout: tensor-file.ts). */
function withHeaderText(bytes: Uint8Array, change: (text: string) => string): Uint8Array {
  const length = new DataView(bytes.buffer, bytes.byteOffset).getUint32(4, true);
  const header = new TextEncoder().encode(change(new TextDecoder().decode(bytes.subarray(8, 8 + length))));
  const dataStart = Math.ceil((8 + length) / 4) * 4;
  const newStart = Math.ceil((8 + header.length) / 4) * 4;
  const out = new Uint8Array(newStart + bytes.length - dataStart);
  out.set(bytes.subarray(0, 4), 0);
  new DataView(out.buffer).setUint32(4, header.length, true);
  out.set(header, 8);
  out.set(bytes.subarray(dataStart), newStart);
  return out;
}

function rejects(read: () => unknown, message: string, field: string): void {
  assert.throws(read, (error: unknown) => {
    assert.ok(error instanceof CorruptDataError, String(error));
    assert.equal(error.message, message);
    assert.equal(error.field, field);
    return true;
  });
}

describe("a tensor file's header", () => {
  test("a tensor length that is not a number names the file and the field", () => {
    const corrupt = withHeaderText(serializeAdapter(adapter()), (text) => text.replace('"length":4', '"length":"4"'));
    rejects(
      () => readTensorFile(corrupt, "adapter file m.lora"),
      "adapter file m.lora header: tensors.0.length must be integer",
      "tensors.0.length",
    );
  });

  test("bytes that are not a tensor file, and a header that is not JSON, say so with the file", () => {
    rejects(() => readTensorFile(new Uint8Array(16), "x.bin"), "x.bin is not a tensor file (no TLMW at its start)", "");
    const bytes = serializeAdapter(adapter());
    bytes[8] = "!".charCodeAt(0);
    assert.throws(() => readTensorFile(bytes, "x.bin"), /^CorruptDataError: x\.bin has a header that is not JSON/);
  });
});

describe("an adapter file", () => {
  test("reads back what was written", () => {
    assert.deepEqual(loadAdapter(serializeAdapter(adapter())), adapter());
  });

  test("a rank that is not a number names the file and the matrix", () => {
    const bytes = withMeta(serializeAdapter(adapter()), (meta) => ({
      ...meta,
      matrices: { "layers.0.wq": { rank: "1", alpha: 2 } },
    }));
    rejects(
      () => loadAdapter(bytes, "adapter file models/acme/m.lora"),
      "adapter file models/acme/m.lora: matrices.layers.0.wq.rank must be integer",
      "matrices.layers.0.wq.rank",
    );
  });

  test("a missing field and a missing tensor are named", () => {
    const { matrices: _, ...noMatrices } = readTensorFile(serializeAdapter(adapter())).meta;
    const bytes = withMeta(serializeAdapter(adapter()), () => noMatrices);
    rejects(() => loadAdapter(bytes, "a.lora"), "a.lora: matrices is missing", "matrices");
    const { tensors, meta } = readTensorFile(serializeAdapter(adapter()));
    tensors.delete("layers.0.wq.B");
    rejects(() => loadAdapter(writeTensorFile(meta, tensors), "a.lora"), "a.lora lacks the tensor layers.0.wq.B", "");
  });
});

describe("a trainer checkpoint", () => {
  test("reads back what was written", () => {
    const bytes = serializeCheckpoint(checkpoint());
    assert.deepEqual(serializeCheckpoint(loadCheckpoint(bytes)), bytes);
  });

  test("a missing optimizer setting names the file and the field", () => {
    const bytes = withMeta(serializeCheckpoint(checkpoint()), (meta) => {
      const optimizer = meta.optimizer as { options: Record<string, unknown> };
      delete optimizer.options.beta2;
      return meta;
    });
    rejects(
      () => loadCheckpoint(bytes, "checkpoint jobs/acme/sft-1/checkpoint.bin"),
      "checkpoint jobs/acme/sft-1/checkpoint.bin: optimizer.options.beta2 is missing",
      "optimizer.options.beta2",
    );
  });

  test("a wrong type deep in the early-stop state, and another format, are named", () => {
    const bytes = withMeta(serializeCheckpoint(checkpoint()), (meta) => ({
      ...meta,
      earlyStop: { ...(meta.earlyStop as object), stopped: "no" },
    }));
    rejects(() => loadCheckpoint(bytes, "c.bin"), "c.bin: earlyStop.stopped must be boolean", "earlyStop.stopped");
    const adapterFile = serializeAdapter(adapter());
    rejects(() => loadCheckpoint(adapterFile, "c.bin"), "c.bin is not a trainer checkpoint of version 1", "");
  });
});

test("a request to a model whose adapter file is corrupt gets the envelope; the log names the file and the field", async () => {
  const server = await startTestServer({ fineTuning: { runJobs: false } });
  const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
  try {
    // A succeeded job and its model, straight in the store; the adapter file beside it is corrupt.
    const job = queuedJob("acme", { baseModel: "tiny-chat" });
    await server.store.fineTuning.createJob(job);
    await server.store.fineTuning.claimJob("test", new Date(), 60_000);
    const adapterPath = "models/acme/broken.lora";
    await server.store.fineTuning.completeJob(
      "acme",
      job.jobId,
      {
        accountId: "acme",
        modelId: "broken",
        baseModel: "tiny-chat",
        jobName: job.jobId,
        adapterPath,
        createTime: new Date(),
      },
      {},
    );
    const file = path.join(server.dataDir, adapterPath);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(
      file,
      withMeta(serializeAdapter(adapter()), (meta) => ({ ...meta, addedTokens: "none" })),
    );
    const ask = () =>
      request(`${server.baseUrl}/responses`, {
        method: "POST",
        key: server.keys.acme,
        body: { model: "accounts/acme/models/broken", input: "Hi", store: false, max_output_tokens: 4 },
      });
    // The first call starts the load; once it has failed, calls say so (500, not "loading"
    // for ever), each one trying the file again.
    const first = await ask();
    assertError(first, { status: 503, code: "DEPLOYMENT_SCALING_UP", type: "service_unavailable" });
    const loadFailed = `adapter file ${file}: addedTokens must be array`;
    const lines = () => logged.mock.calls.map((args) => args.map(String).join(" "));
    await vi.waitFor(() =>
      assert.ok(
        lines().some((line) => line.includes(loadFailed)),
        lines().join("\n"),
      ),
    );
    for (let attempt = 0; attempt < 2; attempt++) {
      const reply = await ask();
      assertError(reply, { status: 500, code: "INTERNAL", type: "server_error" });
      assert.match(reply.body.error.message, /could not load its model/);
      assert.doesNotMatch(reply.text, /CorruptDataError|addedTokens|\.lora/);
      await vi.waitFor(() => assert.ok(lines().filter((line) => line.includes(loadFailed)).length >= attempt + 2));
    }
    // The file mended (restored from a backup): the deployment loads it and serves.
    writeFileSync(file, serializeAdapter(adapter()));
    await vi.waitFor(async () => assert.equal((await ask()).status, 200), { timeout: 5_000, interval: 50 });
  } finally {
    logged.mockRestore();
    await server.close();
  }
});
