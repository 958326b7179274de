/**
 * A value the ingestion path reads from memory (feature flags, model prices)
 * and refreshes from its owner: on an announcement, on a timer, or handed over
 * by a change committed on this node (in force before its answer). Reads may
 * finish out of order: only a read started after the last applied value may
 * replace it, and a handed-over value discards every read started before it.
 */
export class Latest<T> {
  private started = 0;
  private applied = 0;
  /** Reads not yet settled: a timer's poll waits its turn rather than queue reads behind slow ones. */
  private pending = 0;

  constructor(
    public value: T,
    private readonly what: string,
  ) {}

  async refresh(read: () => Promise<T>, log: { warn(o: object, msg: string): void }): Promise<void> {
    const mine = ++this.started;
    this.pending++;
    try {
      const next = await read();
      if (mine > this.applied) {
        this.applied = mine;
        this.value = next;
      }
    } catch (err) {
      log.warn({ err }, `could not refresh ${this.what}; keeping the last known`);
    } finally {
      this.pending--;
    }
  }

  /**
   * A timer's refresh: skipped while a read is still out. Polls that start every few hundred ms whatever their
   * reads take would pile up in the worker queue under load, and every later read (an announcement's too) would
   * wait behind them.
   */
  poll(read: () => Promise<T>, log: { warn(o: object, msg: string): void }): Promise<void> {
    return this.pending > 0 ? Promise.resolve() : this.refresh(read, log);
  }

  set(next: T): void {
    this.applied = ++this.started;
    this.value = next;
  }
}
