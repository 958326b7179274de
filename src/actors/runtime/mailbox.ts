/**
 * A main-thread mailbox: messages wait in order and at most `concurrency` run
 * at once. `drain()` resolves when nothing is queued or running, which is what
 * graceful shutdown waits for.
 */
export class Mailbox {
  private readonly queue: Array<() => Promise<void>> = [];
  private running = 0;
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly concurrency = 1) {}

  /** Messages waiting or running: the mailbox depth shown by /metrics. */
  get depth(): number {
    return this.queue.length + this.running;
  }

  post<R>(work: () => Promise<R> | R): Promise<R> {
    // A free slot and nothing queued: run now. A handler that answers without
    // awaiting (POST /logs) then costs one settled promise, not four and a closure.
    if (this.queue.length === 0 && this.running < this.concurrency) {
      this.running++;
      let out: Promise<R> | R;
      try {
        out = work();
      } catch (err) {
        this.done();
        return Promise.reject(err);
      }
      if (!(out instanceof Promise)) {
        this.done();
        return Promise.resolve(out);
      }
      return out.finally(() => this.done());
    }
    return new Promise<R>((resolve, reject) => {
      this.queue.push(async () => {
        try {
          resolve(await work());
        } catch (err) {
          reject(err);
        }
      });
      this.pump();
    });
  }

  drain(): Promise<void> {
    if (this.depth === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private pump(): void {
    while (this.running < this.concurrency && this.queue.length > 0) {
      const job = this.queue.shift()!;
      this.running++;
      void job().finally(() => this.done());
    }
  }

  /** A message finished: wake the drain waiters, or start the next. */
  private done(): void {
    this.running--;
    if (this.depth === 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    } else {
      this.pump();
    }
  }
}
