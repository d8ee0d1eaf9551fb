/**
 * What the server does when an answer ends, in one `close` listener that every response
 * of a server shares: the in-flight count the drain waits on (drain.ts), the
 * `request.cancelled` line of a client that hung up (http/cancelled.ts), and the access
 * line and HTTP metrics (access-log.ts) when they are on.
 *
 * One listener function made once per server, not a closure (and a once-wrapper) per
 * request and per concern: `close` comes once for every response, and with more than one
 * listener node keeps them in an array that `emit` copies on every call. Three listeners
 * (two of them closures made per request) against this one: 1.09–1.10× on
 * `GET /v1/models` in a pinned A/B (docs/performance.md).
 */
import type { ServerResponse } from "node:http";
import type { Response } from "express";
import { logCancelled } from "../http/cancelled.ts";
import type { AccessRecord } from "./access-log.ts";
import type { InFlight } from "./drain.ts";

/** When the response's request arrived, on the response itself (read by the shared listener). */
const ARRIVED = Symbol("arrived");
type Watched = ServerResponse & { [ARRIVED]: number; locals?: Response["locals"] };

/** Returns the function to call with every response before the app handles its request. */
export function watchAnswers(requests: InFlight, record: AccessRecord | undefined): (res: ServerResponse) => void {
  function answerEnded(this: Watched): void {
    requests.ended();
    const locals = this.locals;
    // A connection the server closed itself (error-handler.ts) is not the client hanging up.
    const cancelled = !this.writableFinished && locals?.closedByServer !== true;
    const arrived = this[ARRIVED];
    if (cancelled) logCancelled(this as unknown as Response, arrived);
    record?.(this, arrived, cancelled);
  }
  return (res) => {
    requests.started();
    (res as Watched)[ARRIVED] = performance.now();
    res.on("close", answerEnded);
  };
}
