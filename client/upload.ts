/**
 * Dataset upload: the one operation whose body is not JSON but the raw JSONL file, so it
 * needs the body passed through as it is rather than serialised.
 */
import type { ApiClient } from "./client.ts";
import { ok } from "./errors.ts";
import type { DatasetVersion } from "./types.ts";

/**
 * The file: text, bytes, a Blob (in Node, `await fs.openAsBlob(path)` streams from disk),
 * or a stream. A stream is read once, so a call with one is not retried.
 */
export type UploadBody = string | Blob | ArrayBuffer | Uint8Array | ReadableStream<Uint8Array>;

/** POST …/datasets/{dataset}:upload with the rows as `application/jsonl`; returns the new version. */
export function uploadDataset(
  client: ApiClient,
  target: { account: string; dataset: string },
  body: UploadBody,
  options: { signal?: AbortSignal } = {},
): Promise<DatasetVersion> {
  const streamed = typeof ReadableStream !== "undefined" && body instanceof ReadableStream;
  return ok(
    client.POST("/accounts/{account}/datasets/{dataset}:upload", {
      params: { path: target },
      body,
      bodySerializer: (raw: unknown) => raw,
      headers: { "Content-Type": "application/jsonl" },
      signal: options.signal,
      // fetch needs this to send a stream as a request body (Node and Chromium).
      ...(streamed ? { duplex: "half" } : {}),
    }),
  );
}

/** Rows as JSONL text: one JSON document per line. */
export function toJsonl(rows: Iterable<unknown>): string {
  let text = "";
  for (const row of rows) text += JSON.stringify(row) + "\n";
  return text;
}
