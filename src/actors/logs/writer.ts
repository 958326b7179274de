/**
 * The log writer: accepted records are encoded at once into a buffer (no
 * strings held for a second, no join and re-encode of 8 MB in one go on
 * the event loop), cut into batches by count, bytes or time, and are inserted into ClickHouse one batch at a
 * time, in order. While ClickHouse fails, batches are retried with backoff
 * and held in memory; past the memory bound they spill to the disk spool,
 * which replays first, in order. Past the disk bound accept() refuses, so the
 * caller can answer 503: nothing accepted is ever dropped.
 */
import type { Logger } from '../../logger.js';
import type { InsertOptions } from '../../storage/clickhouse/client.js';
import { Spool } from './spool.js';

export interface WriterOptions {
  table: string;
  /** The lines are JSON arrays of these columns' values (JSONCompactEachRow); absent: JSON objects (JSONEachRow). */
  columns?: readonly string[];
  batchRecords: number;
  batchBytes: number;
  flushMs: number;
  memoryBytes: number;
  spoolBytes: number;
  spoolDir: string;
}

export interface Inserter {
  insert(table: string, rows: Buffer, options?: InsertOptions): Promise<void>;
}

interface Batch {
  data: Buffer;
  records: number;
  /** The masters whose records it holds; null when not known (a batch read back from the spool). */
  masters: Set<number> | null;
  /** The columns of JSONCompactEachRow lines; absent for JSONEachRow objects (and spool files of earlier versions). */
  columns?: readonly string[];
}

export interface WriterStats {
  accepted: number;
  stored: number;
  spooled: number;
  refused: number;
  insertFailures: number;
  batches: number;
  /** Records per insert and insert seconds, for the metrics histograms. */
  onInsert?: (records: number, seconds: number) => void;
}

const maxBackoffMs = 5000;

export class LogWriter {
  readonly stats: WriterStats = { accepted: 0, stored: 0, spooled: 0, refused: 0, insertFailures: 0, batches: 0 };
  private readonly spool: Spool;
  /** Accepted lines not yet in a batch, UTF-8, each ending in a newline: `lineBytes` of `lines`. */
  private lines: Buffer | undefined;
  private lineRecords = 0;
  private lineBytes = 0;
  private lineMasters = new Set<number>();
  private timer: NodeJS.Timeout | undefined;
  private readonly memory: Batch[] = [];
  private memoryBytes = 0;
  /** Spool writes in order; while any is pending or the spool holds files, new batches go to the spool. */
  private spoolChain: Promise<void> = Promise.resolve();
  private spoolWrites = 0;
  private spoolPendingBytes = 0;
  private pumping: Promise<void> | null = null;
  private backoffMs = 0;
  private retrying = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Told after each batch is in ClickHouse, with the masters it held (null: not known). */
  onStored?: (masters: ReadonlySet<number> | null) => void;

  constructor(
    private readonly opts: WriterOptions,
    private readonly target: Inserter,
    private readonly log: Logger,
  ) {
    this.spool = new Spool(opts.spoolDir);
    if (this.spool.size > 0) log.info({ batches: this.spool.size, bytes: this.spool.bytes }, 'replaying the log spool');
  }

  /** Records waiting anywhere (memory, spool), for metrics and tests. */
  get backlog(): { memoryBytes: number; spoolBytes: number; spoolBatches: number; pendingRecords: number } {
    return {
      memoryBytes: this.memoryBytes + this.lineBytes,
      spoolBytes: this.spool.bytes + this.spoolPendingBytes,
      spoolBatches: this.spool.size,
      pendingRecords: this.lineRecords + this.memory.reduce((n, b) => n + b.records, 0) + this.spool.records,
    };
  }

  start(): void {
    this.kick();
  }

  /**
   * Takes NDJSON text holding `records` records of `masters` (no trailing
   * newline), in the form `columns` says (arrays, or objects without it).
   * false: memory and spool are both full; the caller must refuse with 503.
   */
  accept(ndjson: string, records: number, masters: number | Iterable<number>): boolean {
    // UTF-8 takes at most 3 bytes per UTF-16 unit; without that much room the waiting lines become a batch first.
    const room = ndjson.length * 3 + 1;
    if (!this.lines || this.lines.length - this.lineBytes < room) {
      this.seal();
      if (!this.lines || this.lines.length < room) this.lines = Buffer.allocUnsafeSlow(Math.max(this.opts.batchBytes, room));
    }
    // Written past the waiting lines, counted only once accepted.
    const bytes = this.lines.write(ndjson, this.lineBytes) + 1;
    const held = this.memoryBytes + this.lineBytes + bytes;
    const memoryFull = held > this.opts.memoryBytes;
    const spoolFull = this.spool.bytes + this.spoolPendingBytes + held > this.opts.spoolBytes;
    if (this.stopped || (memoryFull && spoolFull)) {
      this.stats.refused += records;
      return false;
    }
    this.lines[this.lineBytes + bytes - 1] = 0x0a;
    this.lineRecords += records;
    this.lineBytes += bytes;
    if (typeof masters === 'number') this.lineMasters.add(masters);
    else for (const m of masters) this.lineMasters.add(m);
    this.stats.accepted += records;
    if (this.lineRecords >= this.opts.batchRecords || this.lineBytes >= this.opts.batchBytes) this.seal();
    else if (!this.timer) {
      this.timer = setTimeout(() => this.seal(), this.opts.flushMs);
      this.timer.unref();
    }
    return true;
  }

  /**
   * Writes what is buffered now and waits until memory and spool are empty,
   * unless ClickHouse is failing (then it returns at once: those records are
   * written when it recovers).
   */
  async flushNow(): Promise<void> {
    this.seal();
    if (this.retrying) {
      // Try now rather than wait out the backoff; a failure sets retrying again and ends the loop.
      clearTimeout(this.retryTimer);
      this.retrying = false;
    }
    while ((this.memory.length > 0 || this.spool.size > 0 || this.spoolWrites > 0) && !this.retrying) {
      this.kick();
      await this.pumping;
      await this.spoolChain;
    }
  }

  /** Writes or spools everything; after it resolves nothing accepted is only in memory. */
  async stop(): Promise<void> {
    this.seal();
    this.stopped = true;
    clearTimeout(this.retryTimer);
    await this.pumping;
    // One last pass unless ClickHouse is failing: then do not wait out retries, spool instead.
    if (!this.retrying) await this.pump();
    while (this.memory.length > 0) this.toSpool(this.takeMemory()!);
    await this.spoolChain;
  }

  private seal(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.lineRecords === 0) return;
    const lines = this.lines!;
    // A mostly full buffer becomes the batch as it is; a small batch is copied out (its size is what memory counts).
    const handOver = this.lineBytes * 4 >= lines.length * 3;
    const data = handOver ? lines.subarray(0, this.lineBytes) : Buffer.from(lines.subarray(0, this.lineBytes));
    if (handOver) this.lines = undefined;
    const batch: Batch = { data, records: this.lineRecords, masters: this.lineMasters, columns: this.opts.columns };
    this.lineRecords = 0;
    this.lineBytes = 0;
    this.lineMasters = new Set();
    // Order is spool (oldest), then memory, then lines (newest); only memory's oldest batches move to the spool.
    this.memory.push(batch);
    this.memoryBytes += batch.data.length;
    while (this.memoryBytes > this.opts.memoryBytes && this.memory.length > 0) {
      const oldest = this.memory[0]!;
      if (this.spool.bytes + this.spoolPendingBytes + oldest.data.length > this.opts.spoolBytes) break; // disk full: hold in memory
      this.toSpool(this.takeMemory()!);
    }
    this.kick();
  }

  private takeMemory(): Batch | undefined {
    const b = this.memory.shift();
    if (b) this.memoryBytes -= b.data.length;
    return b;
  }

  private toSpool(batch: Batch): void {
    this.spoolWrites++;
    this.spoolPendingBytes += batch.data.length;
    this.stats.spooled += batch.records;
    this.spoolChain = this.spoolChain
      .then(() => this.spool.append(batch.data, batch.records, batch.columns))
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

  private kick(): void {
    if (this.retrying && !this.stopped) return; // the retry timer will pump
    this.pumping ??= this.pump().finally(() => {
      this.pumping = null;
    });
  }

  /** Inserts batches in order until none is left or an insert fails. */
  private async pump(): Promise<void> {
    for (;;) {
      await this.spoolChain;
      let batch: Batch;
      let fromSpool = false;
      const spooled = await this.spool.peek();
      if (spooled) {
        batch = { data: spooled.data, records: spooled.batch.records, masters: null, columns: spooled.columns };
        fromSpool = true;
      } else if (this.memory.length > 0) {
        batch = this.memory[0]!;
      } else {
        return;
      }
      const started = performance.now();
      try {
        await this.target.insert(
          this.opts.table,
          batch.data,
          batch.columns ? { format: 'JSONCompactEachRow', columns: batch.columns } : undefined,
        );
      } catch (err) {
        this.stats.insertFailures++;
        this.backoffMs = Math.min(this.backoffMs ? this.backoffMs * 2 : 100, maxBackoffMs);
        this.log.warn({ err, records: batch.records, retry_in_ms: this.backoffMs }, 'log insert failed; will retry');
        this.retrying = true;
        if (!this.stopped) {
          this.retryTimer = setTimeout(() => {
            this.retrying = false;
            this.kick();
          }, this.backoffMs);
          this.retryTimer.unref();
        }
        return;
      }
      this.backoffMs = 0;
      this.retrying = false;
      this.stats.stored += batch.records;
      this.stats.batches++;
      this.stats.onInsert?.(batch.records, (performance.now() - started) / 1000);
      this.onStored?.(batch.masters);
      if (fromSpool) await this.spool.shift();
      else this.takeMemory();
    }
  }
}
