/**
 * A job's config as the OpenAI fine-tuning API takes it. That API has three knobs:
 * `n_epochs`, `batch_size` and `learning_rate_multiplier` (and `beta` for DPO). The
 * document's config has more. `maxContextLength` this service applies itself (examples
 * longer are skipped before the upload, as the estimate counts them), up to the base's own
 * limit; a field neither side can honour is refused at create (400, naming it) when the
 * request asks for anything other than what the upstream does anyway, rather than being
 * silently dropped.
 */
import { ApiError } from "../../api-error.ts";
import type { PlatformModel } from "../../inference/catalog.ts";
import type { JobType, TrainingConfig } from "../../store/fine-tuning.ts";

type Training = NonNullable<PlatformModel["training"]>;
type Settings = Omit<TrainingConfig, "epochs">;

/** The fields the upstream has no knob for, and the value it behaves as if given. */
function unmappable(training: Training, fixed: Pick<Settings, "earlyStop" | "lrSchedule" | "warmupSteps">) {
  return {
    loraRank: training.loraRank,
    earlyStop: fixed.earlyStop,
    lrSchedule: fixed.lrSchedule,
    warmupSteps: fixed.warmupSteps,
  } as const;
}

/** 400 INVALID_REQUEST naming `config.<field>` when the filled config sets a field the upstream trainer cannot take. */
export function refuseUnmappable(
  base: PlatformModel & { training: Training },
  config: Settings,
  fixed: Pick<Settings, "earlyStop" | "lrSchedule" | "warmupSteps">,
): void {
  if (config.maxContextLength > base.training.maxContextLength) {
    throw new ApiError(
      "INVALID_REQUEST",
      `config.maxContextLength must be at most ${base.training.maxContextLength} for ${base.id}: its trainer takes no longer examples.`,
      { param: "config.maxContextLength" },
    );
  }
  for (const [field, value] of Object.entries(unmappable(base.training, fixed))) {
    if (config[field as keyof Settings] !== value) {
      throw new ApiError(
        "INVALID_REQUEST",
        `config.${field} cannot be set for ${base.id}: its trainer has no such setting (it trains as if ${field} were ${JSON.stringify(value)}).`,
        { param: `config.${field}` },
      );
    }
  }
}

/**
 * The hyperparameters sent upstream. learning_rate_multiplier is the job's learning rate
 * over the trainer's unit (`learningRateUnit`, else the base's default learning rate for
 * the job type): the catalogue's default rate is multiplier 1, twice it is 2.
 */
export function upstreamHyperparameters(
  jobType: JobType,
  training: Training,
  config: TrainingConfig,
): Record<string, number> {
  const unit = Number(
    training.upstream?.learningRateUnit ??
      (jobType === "JOB_TYPE_DPO" ? training.dpoLearningRate : training.learningRate),
  );
  const multiplier = Number((Number(config.learningRate) / unit).toPrecision(6));
  return {
    n_epochs: config.epochs,
    batch_size: config.batchSize,
    learning_rate_multiplier: multiplier,
    ...(jobType === "JOB_TYPE_DPO" ? { beta: Number(config.dpoBeta ?? "0.1") } : {}),
  };
}
