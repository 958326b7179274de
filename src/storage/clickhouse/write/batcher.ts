/**
 * Batching: accepted rows are encoded (UTF-8) at once into one buffer (no
 * strings held for a second, no join and re-encode of 8 MB in one go on the
 * event loop) and cut into batches by count, bytes or time. A batch is cut
 * again when its rows span more partitions than one insert may take
 * (`maxPartitions`): that work happens once a batch, never per accepted row.
 */
import { splitByPartition, type PartitionOf } from './lines.js';

export interface Batch {
  /** NDJSON rows, each line ending in a newline. */
  data: Buffer;
  records: number;
  /** The masters whose records it holds; null when not known (a batch read back from the spool). */
  masters: Set<number> | null;
  /** The columns of JSONCompactEachRow lines; absent for JSONEachRow objects (and spool files of earlier versions). */
  columns?: readonly string[];
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
    this.records += records;
    this.bytes += bytes;
    if (typeof masters === 'number') this.masters.add(masters);
    else for (const m of masters) this.masters.add(m);
    if (this.records >= this.opts.batchRecords || this.bytes >= this.opts.batchBytes) this.seal();
    else if (!this.timer) {
      this.timer = setTimeout(() => this.seal(), this.opts.flushMs);
      this.timer.unref();
    }
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
    const { columns, partitionOf, maxPartitions } = this.opts;
    const records = this.records;
    const masters = this.masters;
    this.records = 0;
    this.bytes = 0;
    this.masters = new Set();
    const groups = partitionOf && maxPartitions ? splitByPartition(data, partitionOf, maxPartitions) : [{ data, records }];
    for (const g of groups) this.sink({ data: g.data, records: groups.length === 1 ? records : g.records, masters, ...(columns ? { columns } : {}) });
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
