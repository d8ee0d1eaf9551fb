/**
 * The binary container for model weights and LoRA adapters: a 4-byte magic, a
 * little-endian u32 header length, a JSON header (free-form `meta` plus the name and
 * length of each tensor), zero padding to a 4-byte boundary, then every tensor as
 * Float32 little-endian in header order. Compact, and readable without any library.
 */
import { endianness } from "node:os";

const MAGIC = "TLMW";

export interface TensorFile {
  meta: Record<string, unknown>;
  tensors: Map<string, Float32Array>;
}

function assertLittleEndian(): void {
  // Float32Array views use the host byte order; the file format is little-endian.
  if (endianness() !== "LE") throw new Error("tensor files need a little-endian host");
}

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

export function readTensorFile(bytes: Uint8Array): TensorFile {
  assertLittleEndian();
  if (new TextDecoder().decode(bytes.subarray(0, 4)) !== MAGIC) throw new Error("not a tensor file");
  const headerLength = new DataView(bytes.buffer, bytes.byteOffset).getUint32(4, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerLength))) as {
    meta: Record<string, unknown>;
    tensors: { name: string; length: number }[];
  };
  let offset = Math.ceil((8 + headerLength) / 4) * 4;
  const tensors = new Map<string, Float32Array>();
  for (const { name, length } of header.tensors) {
    if (offset + length * 4 > bytes.length) throw new Error(`tensor file truncated at ${name}`);
    // Copy out so tensors are aligned and independent of the file buffer (a Node Buffer may be a pooled view).
    const tensor = new Float32Array(length);
    new Uint8Array(tensor.buffer).set(bytes.subarray(offset, offset + length * 4));
    tensors.set(name, tensor);
    offset += length * 4;
  }
  return { meta: header.meta, tensors };
}
