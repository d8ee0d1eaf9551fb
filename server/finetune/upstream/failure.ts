/**
 * A job's failure as a trainer states it: the document's error class and the words the
 * caller reads in stateDetail. The words never name the upstream provider or its URL.
 */
export type ErrorClass = "INVALID_DATA" | "TRAINING_DIVERGED" | "INTERNAL";

export class TrainerFailure extends Error {
  override name = "TrainerFailure";
  readonly errorClass: ErrorClass;
  constructor(errorClass: ErrorClass, stateDetail: string) {
    super(stateDetail);
    this.errorClass = errorClass;
  }
}
