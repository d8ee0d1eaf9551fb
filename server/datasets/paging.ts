/** The dataset list's filter: `state:READY` or `state:DATASET_STATE_READY` (paging is server/http/list-paging.ts). */
import { parseStateFilter } from "../http/list-paging.ts";
import type { DatasetState } from "../store/datasets.ts";

const STATES: DatasetState[] = [
  "DATASET_STATE_CREATING",
  "DATASET_STATE_UPLOADING",
  "DATASET_STATE_VALIDATING",
  "DATASET_STATE_READY",
  "DATASET_STATE_FAILED",
  "DATASET_STATE_DELETED",
];

/** undefined for no filter (""). */
export function parseDatasetFilter(filter: string): DatasetState | undefined {
  return parseStateFilter(filter, "DATASET_STATE_", STATES);
}
