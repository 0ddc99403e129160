/**
 * A first-come, first-served queue that runs one job at a time: the engine holds one model and its
 * forward pass is CPU-bound, so requests are served in turn. A waiting job whose AbortSignal fires
 * (its client went away) leaves the queue without running.
 */

/** A job was aborted before its turn came. */
export class QueueAbortError extends Error {
  constructor() {
    super('the request was aborted while waiting in the queue');
    this.name = 'QueueAbortError';
  }
}

/** One-at-a-time job queue. */
export class SerialQueue {
  private busy = false;
  private readonly waiters: Array<() => void> = [];

  /** Jobs running (0 or 1) and waiting. */
  get stats(): { active: number; waiting: number } {
    return { active: this.busy ? 1 : 0, waiting: this.waiters.length };
  }

  /** Waits for the queue, runs `job`, then hands the queue to the next waiter. */
  async run<T>(signal: AbortSignal, job: () => Promise<T>): Promise<T> {
    if (signal.aborted) throw new QueueAbortError();
    if (this.busy) {
      await new Promise<void>((resolve, reject) => {
        const wake = () => { signal.removeEventListener('abort', onAbort); resolve(); };
        const onAbort = () => {
          const i = this.waiters.indexOf(wake);
          if (i >= 0) this.waiters.splice(i, 1);
          reject(new QueueAbortError());
        };
        this.waiters.push(wake);
        signal.addEventListener('abort', onAbort, { once: true });
      });
      // woken: the queue was handed over with busy still set
    } else {
      this.busy = true;
    }
    try {
      return await job();
    } finally {
      const next = this.waiters.shift();
      if (next) next();
      else this.busy = false;
    }
  }
}
