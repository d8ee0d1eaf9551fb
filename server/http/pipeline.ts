/**
 * A fixed sequence of middleware run as one express layer.
 *
 * Why: express's router spends a few microseconds on every layer it passes (its `next`,
 * the layer match, the prefix trim, the handler's promise check, a diagnostics-channel
 * check); profiled under `GET /v1/models` (bench/request-path.ts, `node --cpu-prof`) the
 * router's own frames were about a seventh of the request's CPU, most of it walking the
 * application's layers that every request passes in the same order. None of those layers
 * is mounted on a path or handles errors, so they need nothing of the router but the
 * order, which this function keeps.
 *
 * The same contract as express 5 gives each layer: `next()` runs the following layer;
 * `next(error)`, a synchronous throw or a rejected promise ends the sequence and hands the
 * error to express, which passes it to the application's error handlers; `next("route")`
 * is `next()` for a layer outside a route, as in express; `next("router")` leaves the
 * sequence with that signal. Error-handling middleware (four parameters) is refused: put
 * it after the sequence, where express calls it.
 */
import type { NextFunction, Request, RequestHandler, Response } from "express";

export function pipeline(...layers: RequestHandler[]): RequestHandler {
  for (const layer of layers) {
    if (layer.length > 3) throw new Error("pipeline() takes request handlers only, not error handlers.");
  }
  return (req: Request, res: Response, done: NextFunction) => {
    let index = 0;
    const next = (signal?: unknown): void => {
      // As express: a falsy value is no error, and "route" outside a route is no signal.
      if (signal && signal !== "route") return done(signal);
      const layer = layers[index++];
      if (layer === undefined) return done();
      try {
        const result: unknown = layer(req, res, next);
        if (result instanceof Promise) result.catch((error: unknown) => done(error ?? new Error("Rejected promise")));
      } catch (error) {
        done(error);
      }
    };
    next();
  };
}
