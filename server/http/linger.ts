/**
 * Closing a connection whose request was not read to the end (an answer sent before the
 * body: 401, 413 on a declared length, a refused upload; a request Node could not parse).
 *
 * Closed at once, a connection the client is still sending on is reset by the kernel, and
 * a reset can destroy the answer before the client has read it. So the rest is read and
 * dropped until the client stops sending, for at most LINGER_MS (a lingering close,
 * RFC 9112 §9.6), and then the connection is closed.
 */
import type { Duplex } from "node:stream";
import type { Response } from "express";

/** How long a connection being closed is still read from, so that the client gets the answer. */
export const LINGER_MS = 2_000;

/** Destroys `socket` once the client has finished sending, or after LINGER_MS. */
export function closeAfterLinger(socket: Duplex): void {
  if (socket.destroyed) return;
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once("close", () => clearTimeout(timer));
  socket.once("end", () => socket.destroy());
}

/**
 * Answers with `Connection: close` and closes the connection after a linger, not as soon as
 * the answer is written (Node's way: it destroys the socket when its last write is done).
 * Call before the answer is sent. The unread body is read and dropped meanwhile (Node
 * dumps the request once its response ends).
 */
export function closeWhenAnswered(res: Response): void {
  res.setHeader("connection", "close");
  const socket = res.socket;
  if (socket === null) return;
  res.once("finish", () => {
    // Node's destroySoon() has just asked for destroy on the socket's own 'finish'.
    socket.removeListener("finish", socket.destroy);
    closeAfterLinger(socket);
  });
}
