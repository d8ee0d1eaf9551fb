/**
 * The seven dataset operations: create, list, get (basic or full view), delete (soft),
 * get one version, upload (streamed to disk) and validateUpload (validation runs in the
 * background). Each is registered by operationId; the HTTP core has already checked the
 * key, the path account (the caller's own) and the request against the contract.
 */
import type { Request, Response } from "express";
import { ApiError } from "../api-error.ts";
import type { OperationHandlers } from "../http/operation-routes.ts";
import { meantApiError } from "../http/store-errors.ts";
import { versionName, type DatasetRecord, type VersionRecord } from "../store/datasets.ts";
import type { Store } from "../store/store.ts";
import { removeFile, storageError, tooLarge, writeFileDurably } from "./files.ts";
import { integerQuery, listBinding, readPageToken, writePageToken } from "../http/list-paging.ts";
import { parseDatasetFilter } from "./paging.ts";
import { takeOverValidation } from "./recovery.ts";
import { declaredTooLarge, uploadBody, type UploadBody } from "./upload-body.ts";
import type { ValidationRunner } from "./validation-runner.ts";
import { toDataset, toDatasetVersion } from "./wire.ts";

export interface DatasetRouteDeps {
  store: Store;
  runner: ValidationRunner;
  maxUploadBytes: number;
  /** This service's owner id for the work it does (owners.ts). */
  owner: string;
  /** Tracks an upload in progress, so shutdown can wait for its cleanup. */
  track<T>(work: Promise<T>): Promise<T>;
}

export function registerDatasetRoutes(handlers: OperationHandlers, deps: DatasetRouteDeps): void {
  const { store } = deps;
  handlers.on("createDataset", async (req, res, params) => {
    const body = req.body;
    // PostgreSQL cannot store it, SQLite could: refused on both, so that the stores agree.
    if (body.dataset.displayName?.includes("\u0000"))
      throw new ApiError("INVALID_REQUEST", "dataset.displayName must not hold the NUL character (U+0000).", {
        param: "dataset.displayName",
      });
    const dataset = await store.datasets.create({
      accountId: account(params),
      datasetId: body.datasetId,
      displayName: body.dataset.displayName ?? "",
      source: "DATASET_SOURCE_UPLOAD",
      now: new Date(),
    });
    res.json(toDataset(dataset));
  });
  handlers.on("listDatasets", (req, res, params) => listDatasets(req, res, store, account(params)));
  handlers.on("getDataset", (req, res, params) => getDataset(req, res, store, params));
  handlers.on("deleteDataset", async (_req, res, params) => {
    res.json(toDataset(await store.datasets.markDeleted(account(params), dataset(params), new Date())));
  });
  handlers.on("getDatasetVersion", async (_req, res, params) => {
    const key = { accountId: account(params), datasetId: dataset(params), versionNo: Number(params.version) };
    await requireDataset(store, key.accountId, key.datasetId);
    const version = await store.datasets.getVersion(key);
    if (!version) throw new ApiError("NOT_FOUND", `${versionName(key)} does not exist.`, { param: "version" });
    res.json(toDatasetVersion(version));
  });
  handlers.on("uploadDataset", (req, res, params) =>
    deps.track(upload(req, res, deps, account(params), dataset(params))),
  );
  handlers.on("validateDatasetUpload", async (_req, res, params) => {
    const { dataset: record, version } = await store.datasets.startValidation(
      account(params),
      dataset(params),
      deps.owner,
      new Date(),
    );
    // Ours (just started, or already running here), or orphaned by a dead process: run it here.
    await takeOverValidation(store, deps.runner, deps.owner, version);
    res.json(toDataset(record));
  });
}

function account(params: Record<string, string>): string {
  return params.account as string;
}

function dataset(params: Record<string, string>): string {
  return params.dataset as string;
}

async function requireDataset(store: Store, accountId: string, datasetId: string): Promise<DatasetRecord> {
  const record = await store.datasets.get(accountId, datasetId);
  if (!record)
    throw new ApiError("NOT_FOUND", `The dataset accounts/${accountId}/datasets/${datasetId} does not exist.`, {
      param: "dataset",
    });
  return record;
}

async function getDataset(req: Request, res: Response, store: Store, params: Record<string, string>): Promise<void> {
  const record = await requireDataset(store, account(params), dataset(params));
  if (req.query.view !== "DATASET_VIEW_FULL") {
    res.json(toDataset(record));
    return;
  }
  const [versions, jobs] = await Promise.all([
    store.datasets.listVersions(record.accountId, record.datasetId),
    store.fineTuning.jobsUsingDataset(record.accountId, record.datasetId),
  ]);
  res.json(toDataset(record, { versions, jobs }));
}

async function listDatasets(req: Request, res: Response, store: Store, accountId: string): Promise<void> {
  const pageSize = integerQuery(req.query.pageSize, "pageSize", 50);
  const filter = typeof req.query.filter === "string" ? req.query.filter : "";
  const state = parseDatasetFilter(filter);
  const binding = listBinding("datasets", accountId, pageSize, filter);
  const token = typeof req.query.pageToken === "string" && req.query.pageToken !== "" ? req.query.pageToken : undefined;
  const beforeSeq = token === undefined ? undefined : readPageToken(token, binding);
  // One more than a page tells whether another page follows.
  const page = await store.datasets.list(accountId, { state, beforeSeq, limit: pageSize + 1 });
  const datasets = page.datasets.slice(0, pageSize);
  const last = datasets.at(-1);
  const nextPageToken = page.datasets.length > pageSize && last ? writePageToken(last.seq, binding) : "";
  res.json({ datasets: datasets.map((d) => toDataset(d)), nextPageToken, totalSize: page.total });
}

/**
 * Receives one upload as version n+1: the rows go to disk as they arrive, are synced, and
 * only then is the version recorded complete and the 200 sent. Anything short of that
 * (too large, client gone, storage failing) removes the file and the version.
 */
async function upload(
  req: Request,
  res: Response,
  deps: DatasetRouteDeps,
  accountId: string,
  datasetId: string,
): Promise<void> {
  // A refused upload's unread body is not drained: the error handler closes the connection.
  checkUploadHeaders(req, deps.maxUploadBytes);
  const record = await requireDataset(deps.store, accountId, datasetId);
  if (record.state === "DATASET_STATE_DELETED")
    throw new ApiError("INVALID_REQUEST", `The dataset ${datasetId} is deleted; create a new dataset to upload rows.`);
  const body = await uploadBody(req);
  res.json(toDatasetVersion(await receive(deps, accountId, datasetId, body)));
}

function checkUploadHeaders(req: Request, maxUploadBytes: number): void {
  if (declaredTooLarge(req, maxUploadBytes)) throw tooLarge(maxUploadBytes);
  const encoding = req.headers["content-encoding"];
  if (encoding !== undefined && encoding.toLowerCase() !== "identity") {
    // The bytes are stored as sent and validated as JSONL: a compressed body would be neither.
    throw new ApiError(
      "INVALID_REQUEST",
      `Content-Encoding ${encoding} is not supported for uploads; send the file uncompressed.`,
    );
  }
}

async function receive(
  deps: DatasetRouteDeps,
  accountId: string,
  datasetId: string,
  body: UploadBody,
): Promise<VersionRecord> {
  const { store } = deps;
  const version = await store.datasets.beginUpload(accountId, datasetId, deps.owner, new Date());
  const file = store.datasets.versionFile(version);
  try {
    const bytes = await writeFileDurably(body.rows, file, deps.maxUploadBytes);
    await body.finished;
    return await store.datasets.completeUpload(version, bytes, new Date());
  } catch (error) {
    const answer = uploadError(error);
    try {
      await removeFile(file);
      await store.datasets.abandonUpload(version, reasonFor(answer), new Date());
    } catch (cleanup) {
      // Answer the upload's own error; the version is settled at the next start.
      console.error(`Could not discard the unfinished upload ${file}: ${(cleanup as Error).message}`);
    }
    throw answer;
  }
}

/** The error to answer: ours as they are, a broken connection as a short body, storage as 503. */
function uploadError(error: unknown): unknown {
  const meant = meantApiError(error);
  if (meant) return meant;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (
    code === "ECONNRESET" ||
    code === "ERR_STREAM_PREMATURE_CLOSE" ||
    (error as Error | undefined)?.message === "aborted"
  ) {
    return new ApiError("INVALID_REQUEST", "The upload ended before the whole body arrived.", { cause: error });
  }
  return storageError(error);
}

/** Why a version that was not kept failed, for the rare case it stays listed (a later upload began meanwhile). */
function reasonFor(error: unknown): string {
  if (error instanceof ApiError && error.code === "MEDIA_TOO_LARGE") return error.message;
  if (error instanceof ApiError && error.code === "INVALID_REQUEST")
    return "the upload ended before the whole file arrived; upload it again";
  return "the file could not be stored; upload it again";
}
