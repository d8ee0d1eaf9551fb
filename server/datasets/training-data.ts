/**
 * What the fine-tuning side uses of datasets: finding the version a job names, reading
 * its rows, and writing the datasets a job produces (an evaluation split, a job's output).
 */
import { parseDatasetName } from "../../common/resource-names.ts";
import type { components } from "../../generated/api.d.ts";
import { checkRow, type ParsedRow, type RowFormat } from "./rows.ts";
import { jsonlLines } from "./validate-file.ts";
import { versionName, type VersionRecord } from "../store/datasets.ts";
import type { Store } from "../store/store.ts";
import { checkVersionFile } from "./check-file.ts";
import { removeFile, writeFileDurably } from "./files.ts";
import { PROCESS_OWNER } from "./owners.ts";

export type DatasetVersionState = components["schemas"]["DatasetVersionState"];

export interface DatasetVersionRef {
  /** `accounts/{a}/datasets/{d}/versions/{n}`. */
  name: string;
  accountId: string;
  datasetId: string;
  versionNo: number;
  state: DatasetVersionState;
  format?: RowFormat;
  exampleCount: number;
  estimatedTokenCount: number;
}

/**
 * ref = "accounts/{a}/datasets/{d}" (latest version) or ".../versions/{n}" (pinned);
 * undefined when it does not exist, is deleted, or belongs to another account than accountId.
 */
export async function resolveDatasetVersion(
  store: Store,
  accountId: string,
  ref: string,
): Promise<DatasetVersionRef | undefined> {
  const named = parseDatasetName(ref);
  if (!named || named.account !== accountId) return undefined;
  const datasetId = named.dataset;
  const dataset = await store.datasets.get(accountId, datasetId);
  if (!dataset || dataset.state === "DATASET_STATE_DELETED") return undefined;
  const versionNo = named.version ?? dataset.latestVersionNo;
  if (versionNo === 0) return undefined;
  const version = await store.datasets.getVersion({ accountId, datasetId, versionNo });
  return version && refOf(version);
}

/**
 * The state of a dataset `ref` names that has no version yet (created, nothing uploaded:
 * `DATASET_STATE_CREATING`); undefined when it does not exist or has a version.
 */
export async function versionlessDatasetState(
  store: Store,
  accountId: string,
  ref: string,
): Promise<string | undefined> {
  const named = parseDatasetName(ref);
  if (!named || named.account !== accountId || named.version !== undefined) return undefined;
  const dataset = await store.datasets.get(accountId, named.dataset);
  if (!dataset || dataset.state === "DATASET_STATE_DELETED" || dataset.latestVersionNo !== 0) return undefined;
  return dataset.state;
}

/** The valid rows of a version, in file order, parsed (streamed from disk). */
export async function* readTrainingRows(store: Store, version: DatasetVersionRef): AsyncIterable<ParsedRow> {
  for await (const batch of jsonlLines(store.datasets.versionFile(version))) {
    for (const line of batch) {
      if (line.text === undefined || line.text.trim() === "") continue;
      const check = checkRow(line.text);
      if (check.ok && (version.format === undefined || check.parsed.format === version.format)) yield check.parsed;
    }
  }
}

/**
 * Creates a dataset with the given source (DATASET_SOURCE_SPLIT or DATASET_SOURCE_JOB_OUTPUT)
 * and one version holding `rows` (objects written as JSONL), validated before it returns
 * (READY, or FAILED if rows are bad). ALREADY_EXISTS if the id is taken.
 */
export async function createDerivedDataset(
  store: Store,
  args: {
    accountId: string;
    datasetId: string;
    displayName: string;
    source: "DATASET_SOURCE_SPLIT" | "DATASET_SOURCE_JOB_OUTPUT";
    rows: Iterable<unknown> | AsyncIterable<unknown>;
  },
): Promise<DatasetVersionRef> {
  const { accountId, datasetId } = args;
  await store.datasets.create({
    accountId,
    datasetId,
    displayName: args.displayName,
    source: args.source,
    now: new Date(),
  });
  const version = await store.datasets.beginUpload(accountId, datasetId, PROCESS_OWNER, new Date());
  const file = store.datasets.versionFile(version);
  try {
    const bytes = await writeFileDurably(jsonl(args.rows), file, Number.POSITIVE_INFINITY);
    await store.datasets.completeUpload(version, bytes, new Date());
  } catch (error) {
    await removeFile(file);
    await store.datasets.abandonUpload(version, "the rows could not be written", new Date());
    throw error;
  }
  await store.datasets.startValidation(accountId, datasetId, PROCESS_OWNER, new Date());
  const validated = await store.datasets.finishValidation(version, await checkVersionFile(file), new Date());
  return refOf(validated ?? (await store.datasets.getVersion(version)) ?? version);
}

/** Rows as JSONL, in buffers of about 64 KiB rather than one write per row. */
async function* jsonl(rows: Iterable<unknown> | AsyncIterable<unknown>): AsyncGenerator<Buffer> {
  let pending: string[] = [];
  let size = 0;
  for await (const row of rows) {
    // JSON.stringify escapes newlines inside strings, so each row stays on one line.
    const line = `${JSON.stringify(row) ?? "null"}\n`;
    pending.push(line);
    size += line.length;
    if (size >= 64 * 1024) {
      yield Buffer.from(pending.join(""));
      pending = [];
      size = 0;
    }
  }
  if (pending.length > 0) yield Buffer.from(pending.join(""));
}

function refOf(version: VersionRecord): DatasetVersionRef {
  return {
    name: versionName(version),
    accountId: version.accountId,
    datasetId: version.datasetId,
    versionNo: version.versionNo,
    state: version.state,
    ...(version.validation.format ? { format: version.validation.format } : {}),
    exampleCount: version.validation.exampleCount,
    estimatedTokenCount: version.validation.estimatedTokenCount,
  };
}
