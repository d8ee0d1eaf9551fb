/**
 * Authentication and tenant checks, run before any operation:
 *
 * 1. the key: `Authorization: Bearer <key>`, or an apiKey header the operation's security
 *    lists (`x-api-key` on POST /v1/messages only) → else 401 INVALID_API_KEY;
 * 2. the tenant: suspended → 403 TENANT_SUSPENDED;
 * 3. the path `{account}` must be the key's account → else 403 OPERATION_NOT_ALLOWED,
 *    whether or not that account exists (so nothing is revealed about other accounts);
 * 4. limits: requests per minute (429), and on paid calls the balance (402) and the
 *    budget (429) — tenant-limits.ts.
 *
 * Requests that match no operation pass untouched: they end as 404 or 405, which reveal
 * nothing the public contract does not.
 *
 * The checks a handler makes later, once it knows the model or trainer, are re-exported
 * here so that handlers import all of authorisation from one place.
 */
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { hashApiKeySecret } from "../store/api-keys.ts";
import { RateCounter } from "../store/cache/rate-counter.ts";
import type { Account, Store } from "../store/store.ts";
import { isPaidOperation } from "./billing.ts";
import { ApiError } from "../api-error.ts";
import type { Caller } from "./locals.ts";
import type { Operation, PathMatch } from "./operations.ts";
import { enforceBalance, enforceBudget, enforceRateLimit, RATE_WINDOW_MS } from "./tenant-limits.ts";

export { chargeUsage, isPaidOperation } from "./billing.ts";
export {
  requireAgreement,
  requireFineTuningEnabled,
  requireModelAllowed,
  requirePaymentMethod,
} from "./permissions.ts";
export type { Caller } from "./locals.ts";

/** The path parameter that scopes an operation to an account. */
const ACCOUNT_PARAM = "account";

/** Middleware: sets `res.locals.caller` for every operation, or throws the ApiError above. */
export function authenticate(store: Store): RequestHandler {
  const rates = new RateCounter(store.rateWindows, RATE_WINDOW_MS);
  return async (req: Request, res: Response, next: NextFunction) => {
    const match = res.locals.pathMatch;
    const operation = match?.operation;
    if (!match || !operation || operation.public) return next();
    const caller = await identifyCaller(store, req, operation);
    checkTenant(caller.account, match);
    await enforceLimits(store, rates, caller.account, operation, new Date());
    res.locals.caller = caller;
    next();
  };
}

async function identifyCaller(store: Store, req: Request, operation: Operation): Promise<Caller> {
  const secret = presentedSecret(req, operation);
  const key = await store.apiKeys.findBySecretHash(secretHashOnConnection(req, secret));
  const account = key && !key.revokedAt ? await store.accounts.get(key.accountId) : undefined;
  if (!key || !account) throw new ApiError("INVALID_API_KEY", "Invalid API key.");
  return { account, keyId: key.id };
}

/**
 * The last key each connection presented, with its hash. A keep-alive client sends the same
 * key on every request, and hashing it was about 3 % of the CPU of `GET /v1/models` in a
 * profile. Only the connection that sent a key can meet its entry again, and the entry goes
 * with the connection; the key itself is still looked up (and revocation seen) every time.
 */
const hashedOnConnection = new WeakMap<object, { secret: string; hash: string }>();

function secretHashOnConnection(req: Request, secret: string): string {
  const last = hashedOnConnection.get(req.socket);
  if (last !== undefined && last.secret === secret) return last.hash;
  const hash = hashApiKeySecret(secret);
  hashedOnConnection.set(req.socket, { secret, hash });
  return hash;
}

/** The key the request presents. Authorization wins when both it and an apiKey header are sent. */
function presentedSecret(req: Request, operation: Operation): string {
  const authorization = req.get("authorization");
  if (authorization !== undefined) {
    const bearer = /^Bearer +(\S+) *$/i.exec(authorization)?.[1];
    if (!bearer) throw new ApiError("INVALID_API_KEY", "The Authorization header must be `Bearer <API key>`.");
    return bearer;
  }
  for (const header of operation.apiKeyHeaders) {
    const value = req.get(header)?.trim();
    if (value) return value;
  }
  const hint = req.get("x-api-key") !== undefined ? " (x-api-key is accepted on POST /v1/messages only)" : "";
  throw new ApiError("INVALID_API_KEY", `Missing API key: send \`Authorization: Bearer <API key>\`${hint}.`);
}

function checkTenant(account: Account, match: PathMatch): void {
  if (account.suspended) throw new ApiError("TENANT_SUSPENDED", "This account is suspended.");
  const pathAccount = match.params[ACCOUNT_PARAM];
  if (pathAccount !== undefined && pathAccount !== account.id) {
    throw new ApiError("OPERATION_NOT_ALLOWED", "This API key may only reach its own account.", {
      param: ACCOUNT_PARAM,
    });
  }
}

async function enforceLimits(
  store: Store,
  rates: RateCounter,
  account: Account,
  operation: Operation,
  now: Date,
): Promise<void> {
  await enforceRateLimit(rates, account, now);
  if (!isPaidOperation(operation.operationId)) return;
  enforceBalance(account);
  await enforceBudget(store, account, now);
}
