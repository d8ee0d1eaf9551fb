/** The dataset list's filter: `state:READY` or `state:DATASET_STATE_READY` (paging is server/http/list-paging.ts). */
import { parseStateFilter } from "../http/list-paging.ts";
import { enums } from "../../generated/contract-values.ts";
import type { DatasetState } from "../store/datasets.ts";

/** undefined for no filter (""). */
export function parseDatasetFilter(filter: string): DatasetState | undefined {
  return parseStateFilter(filter, "DATASET_STATE_", enums.DatasetState);
}
