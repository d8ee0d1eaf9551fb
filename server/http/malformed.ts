/**
 * Requests Node's HTTP server would answer by itself, with a bare status line and no body:
 * a request line or header it cannot parse, header fields over its size limit (16 KB),
 * a request that does not arrive in time, an HTTP/1.1 request without Host, an `Expect`
 * other than 100-continue. Every error answer of this server is the error envelope with
 * an x-request-id, so these are too: 400 INVALID_REQUEST (the contract has no 408, 417 or
 * 431; a malformed request is an invalid one, as a body of the wrong media type is).
 */
import type { Duplex } from "node:stream";
import type { NextFunction, Request, Response } from "express";
import { ApiError } from "../api-error.ts";
import { closeAfterLinger } from "./linger.ts";
import { newRequestId } from "./request-id.ts";

/** Messages by Node's error code; anything else the parser refuses is "not valid HTTP". */
const MESSAGES: Record<string, string> = {
  HPE_HEADER_OVERFLOW: "The request's header fields are larger than the server accepts.",
  HPE_CHUNK_EXTENSIONS_OVERFLOW: "The request's chunk extensions are larger than the server accepts.",
  ERR_HTTP_REQUEST_TIMEOUT: "The request did not arrive in time.",
};

const answered = new WeakSet<Duplex>();

/**
 * The server's `clientError` listener. There is no request or response object here, so the
 * answer is written to the socket itself, and only when nothing of another response on the
 * same connection has been written yet (as Node's own default does).
 *
 * The connection is then closed for writing but still read from for a while (a lingering
 * close, RFC 9112 §9.6): closing it at once while the client is still sending (the rest of
 * a megabyte header) resets it, and a reset can destroy the answer before the client reads it.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (answered.has(socket)) return; // what else it sends fails to parse too, and is dropped
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (error.code === "ECONNRESET" || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  answered.add(socket);
  const body = JSON.stringify(
    new ApiError("INVALID_REQUEST", MESSAGES[error.code ?? ""] ?? "The request is not valid HTTP/1.1.").toBody(),
  );
  const response =
    "HTTP/1.1 400 Bad Request\r\n" +
    `x-request-id: ${newRequestId()}\r\n` +
    "content-type: application/json; charset=utf-8\r\n" +
    `content-length: ${Buffer.byteLength(body)}\r\n` +
    "connection: close\r\n\r\n" +
    body;
  socket.end(response);
  closeAfterLinger(socket);
}

/**
 * Middleware for the check Node's `requireHostHeader` makes (the server turns that off so
 * that the answer is the envelope): an HTTP/1.1 request must name its Host (RFC 9112 §3.2).
 */
export function requireHost(req: Request, _res: Response, next: NextFunction): void {
  if (req.httpVersion === "1.1" && !req.headers.host)
    return next(new ApiError("INVALID_REQUEST", "An HTTP/1.1 request needs a Host header."));
  next();
}

/**
 * A path or query holding an encoded NUL character (`%00`) is refused before it reaches a
 * route: no id, name or parameter of the contract can hold one, and PostgreSQL cannot even
 * be asked about one (it refuses U+0000 in text), so both stores answer alike.
 */
export function refuseEncodedNul(req: Request, _res: Response, next: NextFunction): void {
  if (req.url.includes("%00"))
    return next(
      new ApiError(
        "INVALID_REQUEST",
        "The path or query holds an encoded NUL character (%00), which no id or parameter can hold.",
      ),
    );
  next();
}
