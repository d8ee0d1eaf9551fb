/**
 * Which models an account can name: the platform models (by bare slug or
 * `accounts/maas/models/{id}`) and, through AccountModels, the account's own fine-tuned
 * models (`accounts/{account}/models/{id}`, or their deployments,
 * `accounts/{account}/deployments/{id}`). Another account's model is simply not
 * found, so its existence is never revealed.
 */
import type { Response } from "express";
import { ApiError } from "../api-error.ts";
import type { OperationHandlers } from "../http/operation-routes.ts";
import type { RequestProblems } from "../http/request-problems.ts";
import { parseResourceName } from "../../common/resource-names.ts";
import { findPlatformModel, PLATFORM_ACCOUNT, platformModels, type PlatformModel } from "./catalog.ts";
import { modelNotFoundText, type ModelResolver, type ResolvedModel, type Tenant } from "./resolved-model.ts";

/** How an account's own model is named: as a model, or as its dedicated deployment. */
export type AccountModelKind = "models" | "deployments";
const ACCOUNT_MODEL_KINDS: readonly AccountModelKind[] = ["models", "deployments"];

/** The account's own models; the fine-tuning side provides them. */
export interface AccountModels {
  /** The model named `accounts/{accountId}/{kind}/{modelId}`, or undefined. */
  find(accountId: string, kind: AccountModelKind, modelId: string): Promise<ResolvedModel | undefined>;
  /** Each model under both of its names. */
  list(accountId: string): Promise<ResolvedModel[]>;
}

const NO_ACCOUNT_MODELS: AccountModels = { find: async () => undefined, list: async () => [] };

export function platformModel(name: string, spec: PlatformModel): ResolvedModel {
  return { name, spec, listing: { id: spec.id, created: spec.created, owned_by: PLATFORM_ACCOUNT } };
}

export class CatalogResolver implements ModelResolver {
  readonly #accountModels: AccountModels;
  /** Callable by bare id but not listed: the development server's fault models (server/dev/fault-models.ts). */
  readonly #unlisted: readonly PlatformModel[];

  constructor(accountModels: AccountModels = NO_ACCOUNT_MODELS, unlisted: readonly PlatformModel[] = []) {
    this.#accountModels = accountModels;
    this.#unlisted = unlisted;
  }

  async resolve(name: string, accountId: string): Promise<ResolvedModel | undefined> {
    const spec = findPlatformModel(name) ?? this.#unlisted.find((m) => m.id === name);
    if (spec !== undefined) return platformModel(name, spec);
    for (const kind of ACCOUNT_MODEL_KINDS) {
      const own = parseResourceName(name, kind);
      if (own === undefined) continue;
      if (own.account !== accountId) return undefined;
      const model = await this.#accountModels.find(accountId, kind, own.id);
      return model && { ...model, name };
    }
    return undefined;
  }

  async list(accountId: string): Promise<ResolvedModel[]> {
    return [
      ...platformModels().map((spec) => platformModel(spec.id, spec)),
      ...(await this.#accountModels.list(accountId)),
    ];
  }
}

/**
 * A request the contract refused that also names a model the caller cannot name: said in
 * the same 400, so that both are fixed at once (the 404 would only come after).
 */
export function unknownModelProblems(models: ModelResolver, tenantFor: (res: Response) => Tenant): RequestProblems {
  return async (req, res) => {
    const model = (req.body as { model?: unknown } | undefined)?.model;
    if (typeof model !== "string" || model === "") return [];
    return (await models.resolve(model, tenantFor(res).accountId)) === undefined
      ? [{ param: "model", text: modelNotFoundText(model) }]
      : [];
  };
}

export interface ModelRouteDeps {
  models: ModelResolver;
  tenantFor(res: Response): Tenant;
  /** Whether the list shows the model to the caller. */
  isListed(res: Response, model: ResolvedModel): boolean;
  /** Throws when the caller may not read the model it named (a licence not accepted yet). */
  requireReadable(res: Response, model: ResolvedModel): void;
  /** The routing configuration's version, for `x-config-version`. */
  configVersion(): string;
}

/**
 * Model listing is one of the document's inference endpoints, so its answers carry the
 * inference headers; the catalogue itself is served by the primary (no standby is asked).
 */
function inferenceHeaders(deps: ModelRouteDeps): Record<string, string> {
  return { "x-provider-class": "primary", "x-config-version": deps.configVersion() };
}

export function registerModelRoutes(handlers: OperationHandlers, deps: ModelRouteDeps): void {
  handlers.on("listModels", async (_req, res) => {
    const all = await deps.models.list(deps.tenantFor(res).accountId);
    const listed = all.filter((m) => deps.isListed(res, m));
    res
      .set(inferenceHeaders(deps))
      .json({ object: "list", data: listed.map((m) => ({ ...m.listing, object: "model" })) });
  });
  handlers.on("getModel", async (_req, res, params) => {
    const name = params.model;
    const model = await deps.models.resolve(name, deps.tenantFor(res).accountId);
    if (model === undefined) throw new ApiError("MODEL_NOT_FOUND", modelNotFoundText(name), { param: "model" });
    deps.requireReadable(res, model);
    res.set(inferenceHeaders(deps)).json({ ...model.listing, object: "model" });
  });
}
