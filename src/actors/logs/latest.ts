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

  constructor(
    public value: T,
    private readonly what: string,
  ) {}

  async refresh(read: () => Promise<T>, log: { warn(o: object, msg: string): void }): Promise<void> {
    const mine = ++this.started;
    try {
      const next = await read();
      if (mine > this.applied) {
        this.applied = mine;
        this.value = next;
      }
    } catch (err) {
      log.warn({ err }, `could not refresh ${this.what}; keeping the last known`);
    }
  }

  set(next: T): void {
    this.applied = ++this.started;
    this.value = next;
  }
}
