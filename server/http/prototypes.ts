/**
 * Request and response classes for node:http whose objects are born with the prototypes
 * express gives them, for `http.createServer({IncomingMessage, ServerResponse})`.
 *
 * Why: express's `app.handle` sets every request's and response's prototype with
 * `Object.setPrototypeOf` (to `app.request`, `app.response`). On an object node built with
 * its own prototype that changes the object's shape on every request; V8 skips the change
 * when the prototype is already the one asked for. Measured on `GET /v1/models` (two
 * builds pinned to one core, alternated, both start orders): 1.09–1.25× requests per
 * second; an A/A pair by the same method 0.99.
 *
 * Subclasses rather than constructor functions with express's object as `prototype`: a
 * function that only calls IncomingMessage on `this` gives V8 no count of the properties
 * to come, the objects keep them out of line, and the same measurement fell to 0.82.
 * Express's objects stay in the chain (class prototype → express's → node's), and
 * `app.request` / `app.response` become the class prototypes, so that express sets what
 * node already built.
 *
 * A second listener in the same process (the metrics port) must build its objects from the
 * same classes, and a second express app serving them must set the same prototypes
 * (`servesWith`). node's http functions are shared by every server of the process: objects
 * of another shape, even one request a second, deoptimised some forty of them (parsing,
 * headers, writing) under load and left them polymorphic, and `--trace-deopt` showed the
 * cascade at a scrape's first `/healthz` or `/metrics`.
 */
import http from "node:http";
import type { Express, Response as ExpressResponse } from "express";

export interface ServerClasses {
  IncomingMessage: typeof http.IncomingMessage;
  ServerResponse: typeof http.ServerResponse;
}

export function expressPrototypes(app: Express): ServerClasses {
  class Request extends http.IncomingMessage {}
  // express's json() with the app's defaults (no replacer, spaces or escaping), read once.
  const plainJson = ["json replacer", "json spaces", "json escape"].every((name) => !app.get(name));
  class Response extends http.ServerResponse {
    /**
     * `res.json(body)` as express answers it in the common case (a 2xx or 4xx/5xx with a
     * body, no Content-Type chosen, no conditional request, not HEAD): the same bytes and
     * headers, without express's generic send (charset parsed and formatted again, MIME
     * lookups, settings read per call). Anything else goes to express's own json(). Pinned A/B:
     * GET /v1/models 1.20 and 1.23, POST /v1/responses 1.06 (an A/A pair 1.02).
     */
    json(this: ExpressResponse, body: unknown): ExpressResponse {
      const req = this.req;
      const status = this.statusCode;
      const plain =
        plainJson &&
        status !== 204 &&
        status !== 205 &&
        status !== 304 &&
        req.method !== "HEAD" &&
        req.headers["if-none-match"] === undefined &&
        req.headers["if-modified-since"] === undefined &&
        this.getHeader("content-type") === undefined &&
        this.getHeader("transfer-encoding") === undefined;
      const text = plain ? JSON.stringify(body) : undefined;
      if (text === undefined) return expressJson.call(this, body);
      this.setHeader("Content-Type", "application/json; charset=utf-8");
      this.setHeader("Content-Length", String(Buffer.byteLength(text)));
      this.end(text, "utf8");
      return this;
    }
  }
  const expressJson = (app.response as ExpressResponse).json;
  Object.setPrototypeOf(Request.prototype, app.request);
  Object.setPrototypeOf(Response.prototype, app.response);
  const classes = { IncomingMessage: Request, ServerResponse: Response as typeof http.ServerResponse };
  servesWith(app, classes);
  return classes;
}

/**
 * `app` gives its requests and responses the prototypes of `classes`: for the app they were
 * made for, and for a second express app in the process (the metrics port's), so that the
 * objects of both listeners keep one shape. The second app's `req.app` is then the first.
 */
export function servesWith(app: Express, classes: ServerClasses): void {
  app.request = classes.IncomingMessage.prototype as unknown as Express["request"];
  app.response = classes.ServerResponse.prototype as unknown as Express["response"];
}
