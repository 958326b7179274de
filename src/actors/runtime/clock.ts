/**
 * The service clock: the system time plus an offset kept in shared memory, so
 * that a test can move time forward on the main thread and every worker thread
 * sees the same instant. Production never changes the offset.
 */
export class Clock {
  readonly shared: SharedArrayBuffer;
  private readonly offset: Float64Array;

  constructor(shared: SharedArrayBuffer = new SharedArrayBuffer(8)) {
    this.shared = shared;
    this.offset = new Float64Array(shared);
  }

  now(): number {
    return Date.now() + this.offset[0]!;
  }

  /** Moves the clock forward (or back) by `ms`. */
  advance(ms: number): void {
    this.offset[0] = this.offset[0]! + ms;
  }

  /** Puts the clock at an absolute time. */
  set(epochMs: number): void {
    this.offset[0] = epochMs - Date.now();
  }
}
