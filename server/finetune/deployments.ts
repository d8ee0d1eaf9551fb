/**
 * The dedicated deployments of fine-tuned models: each serves the base model with the
 * job's LoRA adapter. A process loads an adapter from disk the first time the model is
 * called; until it has, calls get 503 DEPLOYMENT_SCALING_UP with Retry-After (as a real
 * deployment answers while it scales up from zero). The process that trained a model
 * warms its deployment before the job reports SUCCEEDED, so it serves at once. An adapter
 * that fails to load is a 500 INTERNAL on the next call (and loaded again), not a 503 for ever.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { resourceName } from "../../common/resource-names.ts";
import { ApiError } from "../api-error.ts";
import { findPlatformModel, type UpstreamTrainerSettings } from "../inference/catalog.ts";
import type { Provider } from "../inference/engine.ts";
import type { ResolvedModel } from "../inference/resolved-model.ts";
import { loadAdapter, type Adapter } from "../inference/local/index.ts";
import type { AccountModelKind, AccountModels } from "../inference/models.ts";
import type { AccountModel, FineTuningStore } from "../store/fine-tuning.ts";
import { isUpstreamModelPath, type UpstreamModelFile } from "./upstream/state.ts";

/** The provider that serves a model tuned upstream: the trainer's own API, under the upstream's name for the model. */
export type UpstreamModelProvider = (settings: UpstreamTrainerSettings, upstreamModel: string) => Provider;

type Loading = { state: "loading" } | { state: "ready"; adapter: Adapter } | { state: "failed"; error: Error };

export class Deployments implements AccountModels {
  readonly #store: FineTuningStore;
  readonly #dataDir: string;
  readonly #loaded = new Map<string, Loading>();
  readonly #upstreamProvider: UpstreamModelProvider | undefined;
  /** Models tuned upstream: the upstream's name of each (its file never changes once written). */
  readonly #upstreamNames = new Map<string, string>();

  constructor(store: FineTuningStore, dataDir: string, upstreamProvider?: UpstreamModelProvider) {
    this.#store = store;
    this.#dataDir = dataDir;
    this.#upstreamProvider = upstreamProvider;
  }

  async find(accountId: string, kind: AccountModelKind, modelId: string): Promise<ResolvedModel | undefined> {
    const model = await this.#store.findModel(accountId, modelId);
    return model && (await this.#withProvider(model, this.#resolved(model, kind)));
  }

  async list(accountId: string): Promise<ResolvedModel[]> {
    const models = await this.#store.listModels(accountId);
    return models.flatMap((m) =>
      [this.#resolved(m, "models"), this.#resolved(m, "deployments")].filter((r) => r !== undefined),
    );
  }

  /** A model tuned upstream is served by that upstream, under its name there; no adapter is loaded here. */
  async #withProvider(model: AccountModel, resolved: ResolvedModel | undefined): Promise<ResolvedModel | undefined> {
    if (resolved === undefined || !isUpstreamModelPath(model.adapterPath)) return resolved;
    const settings = resolved.spec.training?.upstream;
    if (settings === undefined || this.#upstreamProvider === undefined) return undefined; // its trainer is gone from the catalogue
    const id = key(model);
    let upstreamModel = this.#upstreamNames.get(id);
    if (upstreamModel === undefined) {
      const file = JSON.parse(await readFile(path.join(this.#dataDir, model.adapterPath), "utf8")) as UpstreamModelFile;
      upstreamModel = file.model;
      this.#upstreamNames.set(id, upstreamModel);
    }
    const { adapter: _none, ...rest } = resolved;
    return { ...rest, provider: this.#upstreamProvider(settings, upstreamModel) };
  }

  /** Makes the adapter servable in this process at once (the trainer has it in memory). */
  warm(model: Pick<AccountModel, "accountId" | "modelId">, adapter: Adapter): void {
    this.#loaded.set(key(model), { state: "ready", adapter });
  }

  #resolved(model: AccountModel, kind: AccountModelKind): ResolvedModel | undefined {
    const spec = findPlatformModel(model.baseModel);
    if (spec === undefined) return undefined; // a base model the catalogue no longer has
    const name = resourceName(model.accountId, kind, model.modelId);
    return {
      name,
      spec,
      adapter: () => this.#adapter(model),
      listing: { id: name, created: Math.floor(model.createTime.getTime() / 1000), owned_by: model.accountId },
    };
  }

  #adapter(model: AccountModel): Adapter {
    const loading = this.#loaded.get(key(model));
    if (loading?.state === "ready") return loading.adapter;
    if (loading?.state === "loading") throw scalingUp(model);
    this.#load(model);
    // The last load failed (a corrupt or missing adapter file): say so instead of "loading",
    // which a client would retry for ever. The load starts again, so a passing fault (a
    // read error) costs one answer, not the model.
    if (loading?.state === "failed") {
      throw new ApiError("INTERNAL", `The deployment of ${model.modelId} could not load its model.`);
    }
    throw scalingUp(model);
  }

  #load(model: AccountModel): void {
    const id = key(model);
    this.#loaded.set(id, { state: "loading" });
    const file = path.join(this.#dataDir, model.adapterPath);
    readFile(file)
      .then((bytes) => loadAdapter(bytes, `adapter file ${file}`))
      .then(
        (adapter) => this.#loaded.set(id, { state: "ready", adapter }),
        (error: Error) => {
          console.error(`deployment of ${id} failed to load:`, error);
          this.#loaded.set(id, { state: "failed", error });
        },
      );
  }
}

function scalingUp(model: AccountModel): ApiError {
  return new ApiError("DEPLOYMENT_SCALING_UP", `The deployment of ${model.modelId} is loading; retry shortly.`, {
    retryAfter: 1,
  });
}

function key(model: Pick<AccountModel, "accountId" | "modelId">): string {
  return `${model.accountId}/${model.modelId}`;
}
