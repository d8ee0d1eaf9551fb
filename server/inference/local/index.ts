/**
 * The public surface of the local model for the rest of the server: the provider that
 * serves it, and the training API the fine-tuning engine calls (LoRA SFT and DPO on
 * the loaded base weights). Internals (kernels, forward/backward) stay in their files.
 */
export { LocalProvider, REASONING_BUDGET, type LocalProviderOptions } from "./provider.ts";
export { DEFAULT_WEIGHTS_PATH, loadModel, modelInfo, type LocalModel } from "./local-model.ts";
export {
  adaptedVocabulary,
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
export {
  adapterTaskGradients,
  applyAdapterGradients,
  createTrainingState,
  dpoLoss,
  dpoPairLoss,
  dpoStep,
  encodeChatExample,
  encodePreference,
  evaluateLoss,
  renderChat,
  sequenceLogProb,
  trainStep,
  type ChatExample,
  type ChatMessage,
  type EncodedExample,
  type EncodedPreference,
  type GradientTask,
  type PreferencePair,
  type ReferenceLogProbs,
} from "./train.ts";
export { targetCount } from "./loss.ts";
export {
  createOptimizerState,
  learningRateAt,
  type AdamOptions,
  type AdamState,
  type LrSchedule,
  type ScheduleOptions,
} from "./optimizer.ts";
export { corpusDialogues, DIALOGUES_PATH, loadCorpusDialogues, rehearsalExamples } from "./rehearsal.ts";
export type { Gradients } from "./model.ts";
