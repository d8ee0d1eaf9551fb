/**
 * The public surface of the local model for the rest of the server: the provider that
 * serves it, its weights, and its LoRA adapters. Its training (LoRA SFT and DPO on the
 * loaded base weights) lives with the trainer that runs it: server/finetune/local/.
 * Internals (kernels, forward/backward) stay in their files.
 */
export { LocalProvider, REASONING_BUDGET, type LocalProviderOptions } from "./provider.ts";
export { DEFAULT_WEIGHTS_PATH, loadModel, modelInfo, type LocalModel } from "./local-model.ts";
export {
  adaptedVocabulary,
  adapterMatricesSchema,
  adapterMetaSchema,
  adaptModel,
  assertAdapterFits,
  cloneAdapter,
  createAdapter,
  defaultLoraTargets,
  loadAdapter,
  putAdapterTensors,
  serializeAdapter,
  takeAdapterTensors,
  withAdapter,
  type AddedTokens,
  type Adapter,
  type AdapterMeta,
  type AdapterOptions,
  type LoraMatrix,
} from "./lora.ts";
export type { Gradients } from "./model.ts";
