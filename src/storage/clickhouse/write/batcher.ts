/**
 * Batching: accepted rows are encoded (UTF-8) at once into one buffer (no
 * strings held for a second, no join and re-encode of 8 MB in one go on the
 * event loop) and cut into batches by count, bytes or time. A batch is cut
 * again when its rows span more partitions than one insert may take
 * (`maxPartitions`): that work happens once a batch, never per accepted row.
 */
import { countLines, splitByPartition, type PartitionOf } from './lines.js';
import type { WalSegment } from './wal.js';

export interface Batch {
  /** NDJSON rows, each line ending in a newline. */
  data: Buffer;
  records: number;
  /** The masters whose records it holds; null when not known (a batch read back from the spool). */
  masters: Set<number> | null;
  /** The columns of JSONCompactEachRow lines; absent for JSONEachRow objects (and spool files of earlier versions). */
  columns?: readonly string[];
  /** The write-ahead segment holding its rows (durable acknowledgement), released once the batch is done with. */
  segment?: WalSegment;
  /** Read back from the write-ahead file at start: its first insert may have been cut short by the crash. */
  recovered?: boolean;
  /**
   * What an outage left of an isolation (a refused batch cut in halves): the pieces not yet stored, in order, views
   * of `data`. They are inserted as they are, not joined, so that their bytes and tokens match a replay's.
   */
  pieces?: Buffer[];
}

/**
 * The write-ahead file, as the batcher sees it (wal.ts): in `durable` and `fsync` acknowledgement every committed
 * line is appended as it comes; in `memory` acknowledgement nothing is appended and each sealed batch is written
 * whole instead (`perBatch`), so that a crash between `logs` and its views is still replayed.
 */
export interface LineLog {
  readonly perBatch: boolean;
  append(bytes: Buffer): void;
  /** The lines so far make a batch (`data`): they are closed in one segment, returned. */
  rotate(data: Buffer): WalSegment;
}

export interface BatcherOptions {
  batchRecords: number;
  batchBytes: number;
  flushMs: number;
  columns?: readonly string[];
  /** Reads a row's partition; with `maxPartitions`, a batch spanning more is cut into batches that span at most that many. */
  partitionOf?: PartitionOf;
  maxPartitions?: number;
}

export class LineBatcher {
  /** Accepted lines not yet in a batch, each ending in a newline: `bytes` of `buffer`. */
  private buffer: Buffer | undefined;
  records = 0;
  bytes = 0;
  private masters = new Set<number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly opts: BatcherOptions,
    private readonly sink: (batch: Batch) => void,
    private readonly wal?: LineLog,
    /** The sink still holds batches not yet stored: the flush timer then waits, and the lines grow into one insert. */
    private readonly behind: () => boolean = () => false,
  ) {}

  /**
   * Writes a line (no newline) past the waiting lines and says how many
   * bytes it takes with its newline; it counts only once committed. Cuts the
   * waiting lines into a batch first when the buffer has no room for it.
   */
  write(ndjson: string): number {
    // UTF-8 takes at most 3 bytes per UTF-16 unit; without that much room the waiting lines become a batch first.
    const room = ndjson.length * 3 + 1;
    if (!this.buffer || this.buffer.length - this.bytes < room) {
      this.seal();
      if (!this.buffer || this.buffer.length < room) this.buffer = Buffer.allocUnsafeSlow(Math.max(this.opts.batchBytes, room));
    }
    return this.buffer.write(ndjson, this.bytes) + 1;
  }

  /** Counts the line last written: `records` records of `masters`. */
  commit(bytes: number, records: number, masters: number | Iterable<number>): void {
    this.buffer![this.bytes + bytes - 1] = 0x0a;
    if (this.wal && !this.wal.perBatch) this.wal.append(this.buffer!.subarray(this.bytes, this.bytes + bytes));
    this.records += records;
    this.bytes += bytes;
    if (typeof masters === 'number') this.masters.add(masters);
    else for (const m of masters) this.masters.add(m);
    if (this.records >= this.opts.batchRecords || this.bytes >= this.opts.batchBytes) this.seal();
    else if (!this.timer) this.arm();
  }

  /**
   * The flush timer. While earlier batches still wait for the store, it waits another round instead of cutting a
   * small batch behind them: when inserts are slower than the flush interval, many small inserts (each making parts
   * in logs and every rollup) would fall further behind, where one larger insert catches up.
   */
  private arm(): void {
    this.timer = setTimeout(() => {
      if (this.behind()) this.arm();
      else this.seal();
    }, this.opts.flushMs);
    this.timer.unref();
  }

  /** Hands the waiting lines to the sink as one batch (or several, one per group of partitions). */
  seal(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.records === 0) return;
    const buffer = this.buffer!;
    // A mostly full buffer becomes the batch as it is; a small batch is copied out (its size is what memory counts).
    const handOver = this.bytes * 4 >= buffer.length * 3;
    const data = handOver ? buffer.subarray(0, this.bytes) : Buffer.from(buffer.subarray(0, this.bytes));
    if (handOver) this.buffer = undefined;
    const records = this.records;
    const masters = this.masters;
    this.records = 0;
    this.bytes = 0;
    this.masters = new Set();
    const segment = this.wal?.rotate(data);
    for (const b of cutBatch(data, records, masters, this.opts, segment)) this.sink(b);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/**
 * A sealed run of lines as the batches inserted from it: one, or one per group
 * of partitions. A write-ahead segment read back at start is cut the same way,
 * so its inserts are the same bytes (and deduplication tokens) as the first try.
 */
export function cutBatch(
  data: Buffer,
  records: number | undefined,
  masters: Set<number> | null,
  opts: Pick<BatcherOptions, 'columns' | 'partitionOf' | 'maxPartitions'>,
  segment?: WalSegment,
): Batch[] {
  const { columns, partitionOf, maxPartitions } = opts;
  const groups = partitionOf && maxPartitions ? splitByPartition(data, partitionOf, maxPartitions) : [{ data, records: records ?? countLines(data) }];
  if (segment) segment.pending += groups.length;
  return groups.map((g) => ({
    data: g.data,
    records: groups.length === 1 && records !== undefined ? records : g.records,
    masters,
    ...(columns ? { columns } : {}),
    ...(segment ? { segment } : {}),
  }));
}
