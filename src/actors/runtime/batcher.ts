/**
 * Groups hot messages into batches: a batch goes out when it holds `maxItems`
 * items or `maxBytes` bytes, or `maxDelayMs` after its first item, whichever
 * comes first. Batches are delivered one at a time, in order.
 */
export interface BatcherOptions {
  maxItems: number;
  maxBytes: number;
  maxDelayMs: number;
  /** Called when a delivery fails; the batcher goes on with the next batch. */
  onError?: (err: unknown) => void;
}

export class Batcher<T> {
  private items: T[] = [];
  private bytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly options: BatcherOptions,
    private readonly deliver: (items: T[], bytes: number) => Promise<void>,
  ) {}

  get pendingItems(): number {
    return this.items.length;
  }

  get pendingBytes(): number {
    return this.bytes;
  }

  add(item: T, size = 1): void {
    this.items.push(item);
    this.bytes += size;
    if (this.items.length >= this.options.maxItems || this.bytes >= this.options.maxBytes) {
      void this.flush();
    } else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.options.maxDelayMs);
      this.timer.unref();
    }
  }

  /** Sends what is pending; resolves when it and every earlier batch were delivered. */
  flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.items.length > 0) {
      const items = this.items;
      const bytes = this.bytes;
      this.items = [];
      this.bytes = 0;
      this.chain = this.chain
        .then(() => this.deliver(items, bytes))
        .catch((err: unknown) => this.options.onError?.(err));
    }
    return this.chain;
  }
}
