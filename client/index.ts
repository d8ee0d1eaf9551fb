/**
 * The typed client of the inference and fine-tuning service.
 *
 * `createClient` gives every operation of the contract, typed from the generated OpenAPI
 * (openapi-fetch); the other exports are the layer every consumer needs on top: errors,
 * streams, paging, polling and upload. Each is a plain function taking the client, so a
 * bundler keeps only what an application uses.
 */
export { createClient, type ApiClient, type ClientOptions } from "./client.ts";
export { APIConnectionError, APIConnectionTimeoutError, APIUserAbortError } from "./connection-errors.ts";
export { ApiError, ok, parseRetryAfter, type ApiErrorInit, type SuccessData } from "./errors.ts";
export { RETRY_DEFAULTS, type RetryInfo, type RetryOptions } from "./retry.ts";
export { IDEMPOTENT_CREATE_PATHS, randomIdempotencyKey } from "./idempotency.ts";
export {
  EventStream,
  streamChatCompletion,
  streamCompletion,
  streamMessage,
  streamResponse,
  type ChatCompletionStream,
  type CompletionStream,
  type MessageStream,
  type ResponseStream,
  type StreamOptions,
} from "./streams.ts";
export type { StreamedChatCompletion } from "./accumulate.ts";
export { pages, paginate, type ListItem, type ListPage, type ListPath, type PagingInit } from "./paging.ts";
export {
  TERMINAL_DATASET_STATES,
  TERMINAL_JOB_STATES,
  WaitTimeoutError,
  waitForDataset,
  waitForJob,
  type DatasetRef,
  type JobRef,
  type WaitOptions,
} from "./polling.ts";
export { toJsonl, uploadDataset, type UploadBody } from "./upload.ts";
export {
  PLATFORM_ACCOUNT,
  accountOfName,
  datasetVersionName,
  parseDatasetName,
  parseResourceName,
  resourceName,
  type DatasetNameParts,
  type NamedCollection,
} from "../common/resource-names.ts";
export type * from "./types.ts";
