/**
 * The contract's resource names, parsed and written in one place (AIP-122 style, as
 * docs/contract-decisions.md decides): `accounts/{account}/datasets/{dataset}`, its
 * `…/versions/{n}`, `accounts/{account}/trainingJobs/{job}`, `accounts/{account}/models/{model}`
 * and `accounts/{account}/deployments/{deployment}`; platform models are the models of
 * the account `maas`.
 *
 * Pure (no imports, no I/O): the client, the CLI and the reference server import this file
 * (hence its place outside client/ and server/; each package that imports it ships it as
 * `common/`, scripts/build-package.ts), so a name is read the same way by the client, the
 * tools and the service.
 */

/** The collections under `accounts/{account}/` that the contract names resources in. */
export type NamedCollection = "datasets" | "trainingJobs" | "models" | "deployments";

/** The account whose models are the platform's (`accounts/maas/models/tiny-chat`). */
export const PLATFORM_ACCOUNT = "maas";

/** Dataset version numbers start at 1; nine digits at most, as the stores keep them. */
const VERSION = "[1-9][0-9]{0,8}";

/** `accounts/{account}/{collection}/{id}`. */
export function resourceName(account: string, collection: NamedCollection, id: string): string {
  return `accounts/${account}/${collection}/${id}`;
}

/** The account and id of `accounts/{account}/{collection}/{id}`; undefined when `name` is not one. */
export function parseResourceName(
  name: string,
  collection: NamedCollection,
): { account: string; id: string } | undefined {
  const match = new RegExp(`^accounts/([^/]+)/${collection}/([^/]+)$`).exec(name);
  return match ? { account: match[1] as string, id: match[2] as string } : undefined;
}

/** `accounts/{account}/datasets/{dataset}/versions/{version}`. */
export function datasetVersionName(account: string, dataset: string, version: number | string): string {
  return `${resourceName(account, "datasets", dataset)}/versions/${version}`;
}

/** A dataset's name, or a version's, as its parts; `version` only when the name pins one. */
export interface DatasetNameParts {
  account: string;
  dataset: string;
  version?: number;
}

// No segment holds a NUL (U+0000): no id can, and PostgreSQL cannot even be asked about one.
const DATASET_NAME = new RegExp(`^accounts/([^/\0]+)/datasets/([^/\0]+)(?:/versions/(${VERSION}))?$`);

/** `accounts/{a}/datasets/{d}` or `…/versions/{n}` → its parts; undefined when `name` is neither. */
export function parseDatasetName(name: string): DatasetNameParts | undefined {
  const match = DATASET_NAME.exec(name);
  if (!match) return undefined;
  const parts: DatasetNameParts = { account: match[1] as string, dataset: match[2] as string };
  if (match[3] !== undefined) parts.version = Number(match[3]);
  return parts;
}

/** The account a resource name starts with (`accounts/{account}/…`); undefined when it does not. */
export function accountOfName(name: string): string | undefined {
  return /^accounts\/([^/]+)\//.exec(name)?.[1];
}
