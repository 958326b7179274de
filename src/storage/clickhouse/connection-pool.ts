/**
 * Connections lent to one caller at a time: a caller takes an idle one, opens
 * a new one while fewer than `size` exist, or else waits for the first one
 * given back, oldest caller first (a connection chosen on arrival leaves the
 * caller behind a slow call while another connection sits idle). The chDB
 * transport keeps two: one for calls, one for streamed reads.
 */
type Waiter<C> = { resolve: (connection: C) => void; reject: (err: unknown) => void };

export class ConnectionPool<C> {
  readonly #all: C[];
  readonly #idle: C[];
  readonly #waiting: Array<Waiter<C>> = [];
  /** Connections open or opening: counted before an open settles, so two callers cannot both open the last one. */
  #count: number;

  /** `opened`: connections already open (lent before any new one is opened). */
  constructor(
    readonly size: number,
    private readonly open: () => Promise<C>,
    opened: C[] = [],
  ) {
    this.#all = [...opened];
    this.#idle = [...opened];
    this.#count = opened.length;
  }

  /** Every connection opened so far, lent or idle. */
  get all(): readonly C[] {
    return this.#all;
  }

  take(): Promise<C> {
    const idle = this.#idle.pop();
    if (idle !== undefined) return Promise.resolve(idle);
    if (this.#count >= this.size) return new Promise((resolve, reject) => this.#waiting.push({ resolve, reject }));
    return this.#opened();
  }

  /** The connection goes to the caller waiting longest, or back to the idle list. */
  give(connection: C): void {
    const next = this.#waiting.shift();
    if (next) next.resolve(connection);
    else this.#idle.push(connection);
  }

  async #opened(): Promise<C> {
    this.#count++;
    try {
      const connection = await this.open();
      this.#all.push(connection);
      return connection;
    } catch (err) {
      this.#count--;
      // The slot is free again: a caller that queued behind this open tries it rather than waiting for a give that may never come.
      const next = this.#waiting.shift();
      if (next) this.#opened().then(next.resolve, next.reject);
      throw err;
    }
  }
}
