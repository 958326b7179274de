/**
 * Log ids: integers below 2^53 (safe in JSON), unique across restarts and
 * nodes, ordered by time. Layout: 41 bits of milliseconds since 2025-01-01
 * (good until 2094), 4 bits of node id (SVC_NODE_ID, 0-15), 8 bits of
 * sequence. Past 256 ids in one millisecond the generator borrows the next
 * millisecond, so ids stay unique and increasing; at start it continues after
 * the largest id this node already stored, so a restart never reuses one.
 */
const epoch = Date.UTC(2025, 0, 1);
const nodeBits = 4;
const seqBits = 8;
const seqMax = 2 ** seqBits;
const perMs = 2 ** (nodeBits + seqBits);

export class IdGenerator {
  private lastMs = 0;
  private seq = 0;

  constructor(
    private readonly node: number,
    private readonly now: () => number,
  ) {
    if (!Number.isInteger(node) || node < 0 || node >= 2 ** nodeBits) throw new Error(`node id must be 0-${2 ** nodeBits - 1}`);
  }

  /** Resumes after an id already issued (the largest stored one of this node). */
  resumeAfter(id: number): void {
    const ms = Math.floor(id / perMs);
    const seq = id % seqMax;
    if (ms > this.lastMs || (ms === this.lastMs && seq >= this.seq)) {
      this.lastMs = ms;
      this.seq = seq + 1;
    }
  }

  next(): number {
    const ms = Math.max(this.now() - epoch, this.lastMs);
    if (ms > this.lastMs) {
      this.lastMs = ms;
      this.seq = 0;
    }
    if (this.seq >= seqMax) {
      this.lastMs++;
      this.seq = 0;
    }
    return this.lastMs * perMs + this.node * seqMax + this.seq++;
  }
}

/** The node an id was issued by. */
export const nodeOf = (id: number): number => Math.floor(id / seqMax) % 2 ** nodeBits;
/** The range of ids a node issues: for "largest id of this node" queries. */
export const idNodeMask = { perMs, seqMax };
