/**
 * Stop strings matched on decoded text, across token boundaries.
 *
 * Text is released to the caller only once it can no longer be the start of a stop string:
 * the longest suffix of the pending text that is a prefix of some stop string is held back.
 * When a stop string completes, the text before it is released and everything from the stop
 * string on is dropped (neither the stop string nor anything after it is emitted).
 */
export interface StopScan {
  /** Text safe to emit now. */
  emit: string;
  /** The stop string that matched, if any (generation must end). */
  matched?: string;
}

export class StopStringMatcher {
  private pending = '';
  private readonly stops: string[];

  constructor(stops: readonly string[]) {
    this.stops = stops.filter((s) => s.length > 0);
  }

  get active(): boolean { return this.stops.length > 0; }

  /** Feed newly decoded text. */
  push(text: string): StopScan {
    if (!this.active) return { emit: text };
    this.pending += text;
    // Earliest match wins; on equal start, the longer stop string.
    let best = -1;
    let bestStop = '';
    for (const s of this.stops) {
      const i = this.pending.indexOf(s);
      if (i >= 0 && (best < 0 || i < best || (i === best && s.length > bestStop.length))) { best = i; bestStop = s; }
    }
    if (best >= 0) {
      const emit = this.pending.slice(0, best);
      this.pending = '';
      return { emit, matched: bestStop };
    }
    const hold = this.heldSuffixLength();
    const emit = this.pending.slice(0, this.pending.length - hold);
    this.pending = this.pending.slice(this.pending.length - hold);
    return { emit };
  }

  /** Release whatever is held back (generation ended for another reason). */
  flush(): string {
    const out = this.pending;
    this.pending = '';
    return out;
  }

  /** Length of the longest suffix of `pending` that is a proper prefix of a stop string. */
  private heldSuffixLength(): number {
    let longest = 0;
    for (const s of this.stops) {
      const max = Math.min(s.length - 1, this.pending.length);
      for (let n = max; n > longest; n--) {
        if (this.pending.endsWith(s.slice(0, n))) { longest = n; break; }
      }
    }
    return longest;
  }
}
