/**
 * The events of a `text/event-stream` body, parsed by eventsource-parser (which follows
 * the WHATWG rules on line endings, multi-line data and comments, so nothing here splits
 * lines by hand).
 */
import type { EventSourceMessage } from "eventsource-parser";
import { EventSourceParserStream } from "eventsource-parser/stream";
import { typedFetchError } from "./connection-errors.ts";

export type { EventSourceMessage };

/**
 * Yields each event of the body. Leaving the loop early (a `break`, an exception) cancels
 * the body, which closes the connection, so the server stops generating and does not bill
 * the rest.
 */
export async function* readEvents(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<EventSourceMessage, void, undefined> {
  // (The DOM typings declare TextDecoderStream's input as BufferSource, which Uint8Array is.)
  const decoder = new TextDecoderStream() as unknown as ReadableWritablePair<string, Uint8Array>;
  const reader = body.pipeThrough(decoder).pipeThrough(new EventSourceParserStream()).getReader();
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await read(reader);
      if (done) {
        finished = true;
        return;
      }
      yield value;
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

/** The next event; a body cut off (a reset, the server gone) is an APIConnectionError, not fetch's TypeError. */
async function read(reader: ReadableStreamDefaultReader<EventSourceMessage>) {
  try {
    return await reader.read();
  } catch (error) {
    throw typedFetchError(error);
  }
}
