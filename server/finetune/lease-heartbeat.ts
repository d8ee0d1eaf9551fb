/**
 * Keeps a runner's lease on its job while it trains: renews it every third of its length,
 * and says when the job is no longer this runner's.
 *
 * A store that cannot be reached during a renewal does not end the training: the lease
 * written last still holds until its end, no other runner may claim the job before then,
 * and a store back within that time renews it as if nothing happened. So the runner goes
 * on, with a warning in the log. Once that end has passed with the store still failing or
 * silent, another runner may have claimed the job (the store cannot say), so this one
 * stops, as it does when the store answers that the lease is gone (cancelled or taken
 * over): two runners never train one job, and the next claim resumes it from its last
 * checkpoint. (A progress write that fails in an outage ends the attempt by itself, in
 * runner.ts's Training; this module decides only about the lease.)
 */
import { log } from "../log.ts";

export interface LeaseHeartbeatOptions {
  /** The job's name, for the log. */
  job: string;
  /** How long a renewal holds the job. */
  leaseMs: number;
  /** When the lease taken with the claim ends (ms since the epoch). */
  heldUntil: number;
  /** Writes the lease until the given time: false when the job is no longer this runner's. */
  renew: (until: Date) => Promise<boolean>;
  /** Called once when the lease is gone, with why. */
  onLost: (reason: Error) => void;
}

export class LeaseHeartbeat {
  readonly #options: LeaseHeartbeatOptions;
  #heldUntil: number;
  #lost = false;
  #renewing = false;
  readonly #timer: NodeJS.Timeout;

  constructor(options: LeaseHeartbeatOptions) {
    this.#options = options;
    this.#heldUntil = options.heldUntil;
    this.#timer = setInterval(() => void this.#beat(), Math.max(50, options.leaseMs / 3));
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  async #beat(): Promise<void> {
    // A renewal still waiting for the store is not joined by another: past the lease's end
    // with no answer, the store may have let another runner claim the job.
    if (this.#renewing) return this.#loseIfRunOut();
    this.#renewing = true;
    const until = Date.now() + this.#options.leaseMs;
    let held: boolean;
    try {
      held = await this.#options.renew(new Date(until));
    } catch (error) {
      log("warn", "job.lease_renewal_failed", {
        job: this.#options.job,
        detail: error instanceof Error ? error.message : String(error),
        leaseLeftMs: Math.max(0, this.#heldUntil - Date.now()),
      });
      return this.#loseIfRunOut();
    } finally {
      this.#renewing = false;
    }
    // A renewal is fenced by the owner: true even after the lease's end means nobody took the job meanwhile.
    if (!held) return this.#lose(new Error("the job was cancelled or taken over"));
    this.#heldUntil = Math.max(this.#heldUntil, until);
  }

  #loseIfRunOut(): void {
    if (this.#lost || Date.now() < this.#heldUntil) return;
    log("warn", "job.lease_lost", { job: this.#options.job, detail: "not renewed before its end" });
    this.#lose(new Error("the job's lease ran out while the store could not be reached"));
  }

  #lose(reason: Error): void {
    if (this.#lost) return;
    this.#lost = true;
    this.stop();
    this.#options.onLost(reason);
  }
}
