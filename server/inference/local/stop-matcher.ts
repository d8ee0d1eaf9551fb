/**
 * Stop strings over streamed text: generation ends before the first occurrence of any
 * stop string, so text that might be the beginning of one is held back until the next
 * delta shows whether it is.
 */
export class StopMatcher {
  private readonly stops: string[];
  private pending = "";
  stopped = false;

  constructor(stops: readonly string[] | undefined) {
    this.stops = (stops ?? []).filter((s) => s.length > 0);
  }

  /** Adds generated text; returns the text that is safe to emit now. Sets `stopped` on a match. */
  push(delta: string): string {
    if (this.stops.length === 0) return delta;
    this.pending += delta;
    let cut = -1;
    for (const stop of this.stops) {
      const at = this.pending.indexOf(stop);
      if (at >= 0 && (cut < 0 || at < cut)) cut = at;
    }
    if (cut >= 0) {
      this.stopped = true;
      const out = this.pending.slice(0, cut);
      this.pending = "";
      return out;
    }
    const keep = this.partialMatchLength();
    const out = this.pending.slice(0, this.pending.length - keep);
    this.pending = this.pending.slice(this.pending.length - keep);
    return out;
  }

  /** Text still held back; emitted when generation ends without a match. */
  flush(): string {
    const out = this.pending;
    this.pending = "";
    return out;
  }

  /** Length of the longest suffix of the pending text that is a proper prefix of a stop string. */
  private partialMatchLength(): number {
    let best = 0;
    for (const stop of this.stops) {
      for (let n = Math.min(stop.length - 1, this.pending.length); n > best; n--) {
        if (this.pending.endsWith(stop.slice(0, n))) {
          best = n;
          break;
        }
      }
    }
    return best;
  }
}
