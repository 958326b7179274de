/**
 * A count of events over the last N seconds, in one-second buckets: adding is
 * O(1), reading drops the buckets that left the window. Memory is bounded by
 * the window's length in seconds.
 */
export class SlidingCount {
  private secs: number[] = [];
  private counts: number[] = [];
  private head = 0;
  private total = 0;

  add(nowMs: number, n: number): void {
    const sec = Math.floor(nowMs / 1000);
    const last = this.secs.length - 1;
    if (last >= this.head && this.secs[last] === sec) this.counts[last]! += n;
    else {
      this.secs.push(sec);
      this.counts.push(n);
    }
    this.total += n;
  }

  /** Events in the `windowSeconds` seconds ending with the one of `nowMs`. */
  count(nowMs: number, windowSeconds: number): number {
    const oldest = Math.floor(nowMs / 1000) - windowSeconds + 1;
    while (this.head < this.secs.length && this.secs[this.head]! < oldest) this.total -= this.counts[this.head++]!;
    if (this.head > 1024 && this.head * 2 > this.secs.length) {
      this.secs = this.secs.slice(this.head);
      this.counts = this.counts.slice(this.head);
      this.head = 0;
    }
    return this.total;
  }

  clear(): void {
    this.secs = [];
    this.counts = [];
    this.head = 0;
    this.total = 0;
  }
}
