/**
 * Training the embedded model (server/inference/local/), for the trainer (../trainer.ts) and
 * the tools that train or measure it: supervised and DPO steps on a LoRA adapter or the base
 * weights, the loss, Adam and its schedule, and the rehearsal set from the base model's
 * corpus. It sits beside the trainer rather than in inference/, which serves the model and
 * imports nothing of fine-tuning.
 */
export type { ChatExample, ChatMessage, EncodedExample } from "./example.ts";
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
