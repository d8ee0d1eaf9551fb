/**
 * Handlers for a few real contract operations, to test the HTTP core around them. The
 * model id of GET /models/{model} picks a behaviour: a crash, an ApiError, a body that
 * breaks the contract.
 */
import type { Response } from "express";
import type { OperationHandlers } from "../../server/http/operation-routes.ts";
import { ApiError } from "../../server/api-error.ts";
import { compatibilityFields } from "../../server/inference/formats/responses.ts";

export const MODEL_LIST = {
  object: "list",
  data: [{ id: "tiny-chat", object: "model", created: 1767225600, owned_by: "maas" }],
};

export const SECRET_DETAIL = "db password is hunter2";

/** Handlers for a few operations; answers that break the contract on purpose are sent through an untyped response. */
export function registerTestRoutes(handlers: OperationHandlers): void {
  handlers.on("listModels", (_req, res: Response) => {
    res.json(MODEL_LIST);
  });

  handlers.on("getModel", async (_req, res: Response, params) => {
    const model = params.model;
    if (model === "crash") throw new Error(SECRET_DETAIL);
    if (model === "crash-async") await Promise.reject(new TypeError(SECRET_DETAIL));
    if (model === "scaling")
      throw new ApiError("DEPLOYMENT_SCALING_UP", "The deployment is loading.", { retryAfter: 7 });
    if (model === "upstream-limited")
      throw new ApiError("UPSTREAM_RATE_LIMITED", "The upstream is busy.", { retryAfter: 3 });
    if (model === "no-retry-after") throw new ApiError("UPSTREAM_UNAVAILABLE", "No provider answered.");
    if (model === "missing") throw new ApiError("MODEL_NOT_FOUND", "No such model.", { param: "model" });
    if (model === "breaks-contract") {
      res.json({ id: model, object: "model" }); // created and owned_by are missing
      return;
    }
    res.json({ ...MODEL_LIST.data[0], id: model, caller: res.locals.caller.account.id, key: res.locals.caller.keyId });
  });

  handlers.on("createResponse", (req, res: Response) => {
    res.json({
      id: "resp_test",
      object: "response",
      created_at: 1767225600,
      status: "completed",
      model: req.body.model,
      output: [],
      usage: {
        input_tokens: 1,
        output_tokens: 0,
        total_tokens: 1,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens_details: { reasoning_tokens: 0 },
      },
      store: false,
      // The compatibility fields of the Open Responses object (docs/decisions.md), as the real handler echoes them.
      ...compatibilityFields(req.body),
      completed_at: 1767225600,
    });
  });

  handlers.on("createMessage", () => {
    throw new ApiError("MODEL_NOT_FOUND", "No such model.", { param: "model" });
  });

  handlers.on("listDatasets", (_req, res) => {
    res.json({ datasets: [], nextPageToken: "", totalSize: 0 });
  });

  // A stream that fails after it has started: the error handler must not write JSON into it.
  handlers.on("createChatCompletion", (_req, res) => {
    res.status(200).setHeader("content-type", "text/event-stream");
    res.flushHeaders();
    res.write('data: {"partial":true}\n\n');
    throw new Error("failed mid-stream");
  });
}
