/**
 * Output piped into a reader that stops early (`itk jobs metrics latest | head`): the next
 * write fails with EPIPE, which Node reports as an error event on the stream and, unhandled,
 * as a stack trace. A closed pipe means the reader has what it wanted, so the tool stops
 * quietly with exit 0, as `yes | head` does.
 */
export function stopQuietlyOnClosedPipe(streams: NodeJS.WritableStream[], exit: (code: number) => void): void {
  for (const stream of streams) {
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EPIPE") return exit(0);
      throw error;
    });
  }
}
