/**
 * The contract's types, re-exported from the generated `api.d.ts` (the one place the
 * client imports them from), plus short names for the schemas callers use most.
 * Everything here is type-only: it costs nothing at run time.
 */
import type { components, operations, paths } from "../generated/api.d.ts";

export type { components, operations, paths };

/** Any schema of the contract by name: `Schema<"TrainingJob">`. */
export type Schema<Name extends keyof components["schemas"]> = components["schemas"][Name];

export type ErrorCode = Schema<"ErrorCode">;
export type ErrorType = Schema<"ErrorType">;

export type CreateResponseRequest = Schema<"CreateResponseRequest">;
export type ResponseObject = Schema<"ResponseObject">;
export type ResponseStreamEvent = Schema<"ResponseStreamEvent">;

export type CreateChatCompletionRequest = Schema<"CreateChatCompletionRequest">;
export type ChatCompletion = Schema<"ChatCompletion">;
export type ChatCompletionChunk = Schema<"ChatCompletionChunk">;

export type CreateCompletionRequest = Schema<"CreateCompletionRequest">;
export type Completion = Schema<"Completion">;

export type CreateMessageRequest = Schema<"CreateMessageRequest">;
export type Message = Schema<"Message">;
export type MessageStreamEvent = Schema<"MessageStreamEvent">;

export type Dataset = Schema<"Dataset">;
export type DatasetState = Schema<"DatasetState">;
export type DatasetVersion = Schema<"DatasetVersion">;
export type TrainingJob = Schema<"TrainingJob">;
export type TrainingJobRequest = Schema<"TrainingJobRequest">;
export type JobState = Schema<"JobState">;
export type JobType = Schema<"JobType">;
