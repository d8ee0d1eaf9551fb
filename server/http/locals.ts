/**
 * What the HTTP core leaves in `res.locals` for later middleware and handlers, typed by
 * extending express's `Locals`.
 */
import type { Account } from "../store/store.ts";
import type { PathMatch } from "./operations.ts";

/** The authenticated caller of an operation. */
export interface Caller {
  account: Account;
  /** The id (`key_…`) of the key used, never the key itself. */
  keyId: string;
}

declare global {
  namespace Express {
    interface Locals {
      /** `req_…`, also sent as the x-request-id header of every response. */
      requestId: string;
      /** The contract path (and operation) the request matched; undefined when none. */
      pathMatch: PathMatch | undefined;
      /**
       * Set by authentication for every operation of the contract, before any handler runs
       * (requests that match no operation never reach a handler).
       */
      caller: Caller;
      /** Set when the server itself closes the connection mid-answer (not a client that hung up). */
      closedByServer?: boolean;
      /** The error.code of an error answer (error-handler.ts), for the access log and metrics. */
      errorCode?: string;
      /** What a generation ran on and used (inference/routes.ts), for the access log. */
      generation?: { model: string; providerClass: string; inputTokens?: number; outputTokens?: number };
    }
  }
}
