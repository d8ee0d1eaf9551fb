/**
 * The rows of an upload as a stream, from either form of the request body: the raw file
 * (`application/jsonl`, `application/octet-stream`) is the request itself; a form
 * (`multipart/form-data`) is parsed as it arrives by busboy and the part named `file` is
 * the stream. Neither is ever held whole in memory.
 */
import { finished as streamEnded, PassThrough, type Readable } from "node:stream";
import busboy from "busboy";
import type { Request } from "express";
import { declaresMoreThan } from "../http/body.ts";
import { ApiError } from "../api-error.ts";

export interface UploadBody {
  rows: Readable;
  /** Settles when the whole request has been read (for a form: every part after `file` too). */
  finished: Promise<void>;
}

export function isForm(req: Request): boolean {
  return req.is("multipart/form-data") === "multipart/form-data";
}

/** Whether a raw body's declared length (Content-Length) is over `maxBytes`: 413 before reading any of it. */
export function declaredTooLarge(req: Request, maxBytes: number): boolean {
  return !isForm(req) && declaresMoreThan(req, maxBytes);
}

/** Resolves once the rows start arriving (for a form: once its `file` part begins). */
export function uploadBody(req: Request): Promise<UploadBody> {
  if (!isForm(req)) return Promise.resolve({ rows: req, finished: Promise.resolve() });
  return formFile(req);
}

function formFile(req: Request): Promise<UploadBody> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      // Small limits for everything except the file: a form is a wrapper, not a payload.
      parser = busboy({
        headers: req.headers,
        limits: { fields: 20, fieldSize: 64 * 1024, parts: 50, headerPairs: 50 },
      });
    } catch (error) {
      reject(
        new ApiError("INVALID_REQUEST", `The form cannot be read: ${(error as Error).message}.`, {
          param: "file",
          cause: error,
        }),
      );
      return;
    }
    let found = false;
    const finished = new Promise<void>((done, fail) => {
      parser.once("close", done);
      parser.once("error", (error: Error) => fail(badForm(error)));
    });
    // Observed once the rows are written; until then a failure must not be unhandled.
    finished.catch(() => undefined);
    parser.on("file", (name, stream) => {
      // busboy errors a file stream when the form ends or breaks inside it. With nobody
      // listening (a part we skip, or `file` before the handler starts reading it) that
      // error would end the process; the parser's own 'error' reports it (`finished`).
      stream.on("error", () => undefined);
      if (name !== "file" || found) {
        stream.resume(); // other files are not ours to keep
        return;
      }
      found = true;
      resolve({ rows: formRows(stream), finished });
    });
    finished.then(
      () =>
        reject(
          new ApiError("INVALID_REQUEST", "The form has no file part named `file`; send the JSONL file in it.", {
            param: "file",
          }),
        ),
      (error: unknown) => reject(error),
    );
    // finished(), not an 'error' listener: a client that hung up while the route awaited the
    // store has ended its request already, and the parser would then wait for ever (an upload
    // that never settles holds a server's shutdown; seen on PostgreSQL, whose calls take turns).
    streamEnded(req, (error) => {
      if (error) parser.destroy(error);
    });
    req.pipe(parser);
  });
}

/**
 * The `file` part's bytes, ending with a 400 (not busboy's plain Error, which would be
 * answered as a 500) when the form breaks inside it. Closing the rows early (a 413)
 * stops the part too.
 */
function formRows(part: Readable): Readable {
  const rows = new PassThrough();
  rows.on("error", () => undefined); // the reader sees it: a stream's iterator rethrows its error
  part.on("error", (error) => rows.destroy(badForm(error)));
  rows.once("close", () => part.destroy());
  return part.pipe(rows);
}

function badForm(error: Error): ApiError {
  return new ApiError("INVALID_REQUEST", `The form cannot be read: ${error.message}.`, { param: "file", cause: error });
}
