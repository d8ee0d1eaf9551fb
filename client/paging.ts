/**
 * Async iteration over the list operations (datasets, SFT jobs, DPO jobs, and any list
 * the contract adds): each page is fetched when the previous one is used up, with every
 * other parameter kept as given (the service rejects a page token sent with different
 * parameters).
 *
 * The list paths and their item types come from the contract: a GET that takes
 * `pageToken` and answers `{<items>: T[], nextPageToken, totalSize}`.
 */
import type { ApiClient } from "./client.ts";
import { ok } from "./errors.ts";
import type { paths } from "./types.ts";

/** The paths of list operations: their GET takes a `pageToken` query parameter. */
export type ListPath = {
  [P in keyof paths]: paths[P] extends { get: { parameters: { query?: infer Q } } }
    ? [NonNullable<Q>] extends [never] // `query?: never`: no query at all (keyof never would match anything)
      ? never
      : "pageToken" extends keyof NonNullable<Q>
        ? P
        : never
    : never;
}[keyof paths];

type ListOperation<P extends ListPath> = paths[P]["get"];
/** The JSON body of one page. */
export type ListPage<P extends ListPath> = ListOperation<P>["responses"][200]["content"]["application/json"];
/** The item type of a list: the element type of the page's one array field (per path, when given a union). */
export type ListItem<P extends ListPath> = P extends ListPath
  ? { [K in keyof ListPage<P>]: ListPage<P>[K] extends readonly (infer Item)[] ? Item : never }[keyof ListPage<P>]
  : never;

/** What a list call takes: its path parameters, and the query without the page token (the iterator sets that). */
export interface PagingInit<P extends ListPath> {
  params: {
    path: ListOperation<P>["parameters"]["path"];
    query?: Omit<NonNullable<ListOperation<P>["parameters"]["query"]>, "pageToken">;
  };
  signal?: AbortSignal;
}

/**
 * Every page of a list, in order: `for await (const page of pages(client, path, init))`.
 * Each page is the operation's typed answer, with `totalSize` and `nextPageToken`.
 */
export async function* pages<P extends ListPath>(
  client: ApiClient,
  path: P,
  init: PagingInit<NoInfer<P>>,
): AsyncGenerator<ListPage<P>, void, undefined> {
  // The generic path defeats openapi-fetch's per-path overloads; the init was typed above.
  const get = client.GET as unknown as (
    path: string,
    init: unknown,
  ) => Promise<{ data?: ListPage<P>; error?: unknown; response: Response }>;
  let pageToken: string | undefined;
  do {
    const query = { ...init.params.query, ...(pageToken === undefined ? {} : { pageToken }) };
    const page: ListPage<P> = await ok(get(path, { params: { path: init.params.path, query }, signal: init.signal }));
    yield page;
    // "" marks the last page (the contract), so an empty token ends the loop.
    pageToken = (page as { nextPageToken?: string }).nextPageToken || undefined;
  } while (pageToken !== undefined);
}

/**
 * Every item of a list across all its pages:
 * `for await (const job of paginate(client, "/accounts/{account}/dpoJobs", { params: { path: { account } } }))`.
 */
export async function* paginate<P extends ListPath>(
  client: ApiClient,
  path: P,
  init: PagingInit<NoInfer<P>>,
): AsyncGenerator<ListItem<P>, void, undefined> {
  for await (const page of pages(client, path, init)) {
    for (const value of Object.values(page as object)) {
      if (Array.isArray(value)) yield* value as ListItem<P>[];
    }
  }
}
