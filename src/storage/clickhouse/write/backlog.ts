/**
 * The memory bound and the disk spool: batches waiting for ClickHouse, in
 * the order they were cut. Batches wait in memory up to `memoryBytes`; past
 * it the oldest move to the spool (which, holding the oldest, is always
 * inserted first), up to `spoolBytes`; past both the writer refuses new
 * records. A spool write that fails keeps its batch in memory.
 */
import type { Logger } from '../../../logger.js';
import type { Batch } from './batcher.js';
import { countLines, joinLines } from './lines.js';
import { Spool } from './spool.js';

/** The oldest batch and where it lives. */
export interface Head {
  batch: Batch;
  fromSpool: boolean;
  /** Set for a spool file whose column list cannot be read: its bytes cannot be inserted as they are. */
  unreadable?: string;
}

export class Backlog {
  private readonly memory: Batch[] = [];
  memoryBytes = 0;
  /** Spool writes in order; head() waits for them, so that order holds. */
  private spoolChain: Promise<void> = Promise.resolve();
  private spoolWrites = 0;
  private spoolPendingBytes = 0;
  /** The memory batch being inserted: it never moves to the spool under the insert's feet. */
  private inFlight: Batch | null = null;

  constructor(
    private readonly spool: Spool,
    private readonly bounds: { memoryBytes: number; spoolBytes: number },
    private readonly log: Logger,
  ) {}

  /** Whether `extra` more bytes in memory would pass both bounds (the writer then refuses). */
  full(extra: number): boolean {
    const held = this.memoryBytes + extra;
    return held > this.bounds.memoryBytes && this.spoolBytes + held > this.bounds.spoolBytes;
  }

  get spoolBytes(): number {
    return this.spool.bytes + this.spoolPendingBytes;
  }

  get spoolBatches(): number {
    return this.spool.size;
  }

  get pendingRecords(): number {
    let n = this.spool.records;
    for (const b of this.memory) n += b.records;
    return n;
  }

  /** Anything waiting, in memory, on disk, or on its way to disk. */
  /** A batch read back from the write-ahead file waits in memory (a spooled one is no longer told apart). */
  get holdsRecovered(): boolean {
    return this.memory.some((b) => b.recovered);
  }

  get busy(): boolean {
    return this.memory.length > 0 || this.spool.size > 0 || this.spoolWrites > 0;
  }

  /** Resolves once the spool writes started so far are done. */
  drained(): Promise<void> {
    return this.spoolChain;
  }

  push(batch: Batch): void {
    this.memory.push(batch);
    this.memoryBytes += batch.data.length;
    for (;;) {
      const at = this.memory[0] === this.inFlight ? 1 : 0;
      const oldest = this.memory[at];
      if (!oldest || this.memoryBytes <= this.bounds.memoryBytes) break;
      if (this.spoolBytes + oldest.data.length > this.bounds.spoolBytes) break; // disk full: hold in memory
      this.toSpool(this.takeMemory(at)!);
    }
  }

  /** The oldest batch, without removing it. */
  async head(): Promise<Head | null> {
    await this.spoolChain;
    const spooled = await this.spool.peek();
    if (spooled) {
      const batch: Batch = { data: spooled.data, records: spooled.batch.records, masters: null, ...(spooled.columns ? { columns: spooled.columns } : {}) };
      return { batch, fromSpool: true, ...(spooled.unreadable ? { unreadable: spooled.unreadable } : {}) };
    }
    const batch = this.memory[0];
    if (!batch) return null;
    this.inFlight = batch;
    return { batch, fromSpool: false };
  }

  /** The head is done with (stored or set apart), or only `left` of it remains to store. */
  async settle(head: Head, left: Buffer[] | null): Promise<void> {
    if (!head.fromSpool) this.inFlight = null;
    if (!left || left.length === 0) {
      if (head.fromSpool) await this.spool.shift();
      else this.takeMemory(this.memory.indexOf(head.batch));
      head.batch.segment?.doneWith();
      return;
    }
    if (left.length === 1 && left[0] === head.batch.data) return; // nothing of it was stored or set apart
    const data = joinLines(left);
    const records = countLines(data);
    if (head.fromSpool) {
      // The spool file is what a crash replays: the retry inserts the same joined bytes, under the same token.
      await this.spool.replaceHead(data, records, head.batch.columns);
    } else {
      this.memoryBytes += data.length - head.batch.data.length;
      head.batch.data = data;
      head.batch.records = records;
      // Kept as the pieces they were, not one joined insert: a crash would replay the whole batch from its
      // write-ahead segment, cut the same way, and only the same bytes carry the same deduplication tokens.
      head.batch.pieces = piecesOf(data, left);
    }
  }

  /** Moves everything in memory to the spool (at shutdown), in order. */
  spillAll(): Promise<void> {
    while (this.memory.length > 0) this.toSpool(this.takeMemory()!);
    return this.spoolChain;
  }

  private takeMemory(at = 0): Batch | undefined {
    if (at < 0) return undefined;
    const [b] = this.memory.splice(at, 1);
    if (b) this.memoryBytes -= b.data.length;
    return b;
  }

  private toSpool(batch: Batch): void {
    this.spoolWrites++;
    this.spoolPendingBytes += batch.data.length;
    this.onSpooled?.(batch.records);
    this.spoolChain = this.spoolChain
      .then(async () => {
        // The pieces left of an interrupted isolation go as one spool file each, so they keep their bytes (and tokens).
        if (batch.pieces) for (const p of batch.pieces) await this.spool.append(p, countLines(p), batch.columns);
        else await this.spool.append(batch.data, batch.records, batch.columns);
        batch.segment?.doneWith(); // its rows are on disk in the spool now
      })
      .catch((err: unknown) => {
        // The disk failed too: keep the batch in memory rather than lose it.
        this.log.error({ err }, 'log spool write failed; batch kept in memory');
        this.memory.unshift(batch);
        this.memoryBytes += batch.data.length;
      })
      .finally(() => {
        this.spoolWrites--;
        this.spoolPendingBytes -= batch.data.length;
      });
  }

  /** Told of each batch sent to the spool (records), for the writer's statistics. */
  onSpooled?: (records: number) => void;
}

/** `left`'s pieces as views of `data`, their concatenation (each piece ends with its newline). */
function piecesOf(data: Buffer, left: readonly Buffer[]): Buffer[] {
  const pieces: Buffer[] = [];
  let at = 0;
  for (const p of left) {
    const end = at + p.length + (p[p.length - 1] === 0x0a ? 0 : 1);
    pieces.push(data.subarray(at, end));
    at = end;
  }
  return pieces;
}
