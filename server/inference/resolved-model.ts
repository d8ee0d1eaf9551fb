/**
 * A model as a request names it, resolved for the caller's account, the resolver that finds
 * it, the caller the engine charges, and the text of MODEL_NOT_FOUND. Its own module because
 * both the generation core (generation.ts) and the model routes (models.ts, which implements
 * the resolver) use them: each used to import the other.
 */
import type { PlatformModel } from "./catalog.ts";
import type { Provider, Usage } from "./engine.ts";

/** A model a request may name, resolved for the caller's account. */
export interface ResolvedModel {
  /** The name as the request gave it; answers echo it. */
  name: string;
  /** The platform model that runs (for a fine-tuned model, its base). */
  spec: PlatformModel;
  /**
   * A fine-tuned model's adapter, handed to the local provider. Throws 503
   * DEPLOYMENT_SCALING_UP while its deployment is still loading it.
   */
  adapter?: () => unknown;
  /** A model tuned by an upstream trainer: served by that upstream, whatever the routing file says. */
  provider?: Provider;
  /** As GET /models lists it. */
  listing: { id: string; created: number; owned_by: string };
}

/** The models an account can name: the platform's and its own. */
export interface ModelResolver {
  resolve(name: string, accountId: string): Promise<ResolvedModel | undefined>;
  list(accountId: string): Promise<ResolvedModel[]>;
}

/** What the engine needs to know about the caller; the HTTP layer implements it over the store. */
export interface Tenant {
  accountId: string;
  /** Throws MODEL_NOT_ALLOWED, PAYMENT_REQUIRED or AGREEMENT_REQUIRED when the account may not call the model. */
  authorizeModel(model: ResolvedModel): Promise<void>;
  /** Records the tokens of a finished generation against the account's balance and budget. */
  charge(model: ResolvedModel, usage: Usage): Promise<void>;
}

/** The message of MODEL_NOT_FOUND, for the model a request named. */
export function modelNotFoundText(name: string): string {
  return `The model \`${name}\` does not exist or you do not have access to it.`;
}
