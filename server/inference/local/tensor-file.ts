/**
 * The binary container for model weights and LoRA adapters: a 4-byte magic, a
 * little-endian u32 header length, a JSON header (free-form `meta` plus the name and
 * length of each tensor), zero padding to a 4-byte boundary, then every tensor as
 * Float32 little-endian in header order. Compact, and readable without any library.
 */
import { endianness } from "node:os";
import { compileCheck, CorruptDataError, requiredKeys } from "../../checked-json.ts";

const MAGIC = "TLMW";

export interface TensorFile {
  meta: Record<string, unknown>;
  tensors: Map<string, Float32Array>;
}

function assertLittleEndian(): void {
  // Float32Array views use the host byte order; the file format is little-endian.
  if (endianness() !== "LE") throw new Error("tensor files need a little-endian host");
}

interface TensorFileHeader {
  meta: Record<string, unknown>;
  tensors: { name: string; length: number }[];
}

const checkHeader = compileCheck<TensorFileHeader>({
  type: "object",
  required: requiredKeys<TensorFileHeader>()(["meta", "tensors"]),
  properties: {
    // What the meta holds is the reader's to check (lora.ts, trainer-checkpoint.ts, local-model.ts).
    meta: { type: "object" },
    tensors: {
      type: "array",
      items: {
        type: "object",
        required: requiredKeys<TensorFileHeader["tensors"][number]>()(["name", "length"]),
        properties: { name: { type: "string" }, length: { type: "integer", minimum: 0 } },
      },
    },
  },
});

export function writeTensorFile(meta: Record<string, unknown>, tensors: ReadonlyMap<string, Float32Array>): Uint8Array {
  assertLittleEndian();
  const entries = [...tensors].map(([name, t]) => ({ name, length: t.length }));
  const header = new TextEncoder().encode(JSON.stringify({ meta, tensors: entries }));
  const dataStart = Math.ceil((8 + header.length) / 4) * 4;
  const total = dataStart + entries.reduce((n, e) => n + e.length * 4, 0);
  const bytes = new Uint8Array(total);
  bytes.set(new TextEncoder().encode(MAGIC), 0);
  new DataView(bytes.buffer).setUint32(4, header.length, true);
  bytes.set(header, 8);
  let offset = dataStart;
  for (const t of tensors.values()) {
    bytes.set(new Uint8Array(t.buffer, t.byteOffset, t.byteLength), offset);
    offset += t.byteLength;
  }
  return bytes;
}

/** Reads the container; `source` (a file name) is named by every error, with the header's field at fault. */
export function readTensorFile(bytes: Uint8Array, source = "tensor file"): TensorFile {
  assertLittleEndian();
  if (new TextDecoder().decode(bytes.subarray(0, 4)) !== MAGIC)
    throw new CorruptDataError(source, "", `is not a tensor file (no ${MAGIC} at its start)`);
  const headerLength = new DataView(bytes.buffer, bytes.byteOffset).getUint32(4, true);
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerLength)));
  } catch (error) {
    throw new CorruptDataError(source, "", `has a header that is not JSON (${(error as Error).message})`);
  }
  const header = checkHeader(parsed, `${source} header`);
  let offset = Math.ceil((8 + headerLength) / 4) * 4;
  const tensors = new Map<string, Float32Array>();
  for (const { name, length } of header.tensors) {
    if (offset + length * 4 > bytes.length) throw new CorruptDataError(source, "", `is truncated at tensor ${name}`);
    // Copy out so tensors are aligned and independent of the file buffer (a Node Buffer may be a pooled view).
    const tensor = new Float32Array(length);
    new Uint8Array(tensor.buffer).set(bytes.subarray(offset, offset + length * 4));
    tensors.set(name, tensor);
    offset += length * 4;
  }
  return { meta: header.meta, tensors };
}
