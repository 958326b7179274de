/**
 * The table writer: accepted rows go through the batcher (count, bytes,
 * time, partitions), wait in the backlog (memory, then the disk spool), and
 * are inserted one batch at a time, oldest first, through the transport.
 * Should ClickHouse refuse a batch, its refused rows are isolated and moved
 * to the dead letters, and the rest is stored (isolate.ts); should it be out,
 * the batch is retried with backoff, forever, and nothing is dead-lettered.
 * Past the memory and disk bounds accept() refuses, so the caller can answer
 * 503: nothing accepted is ever dropped.
 */
import { createHash } from 'node:crypto';
import type { Logger } from '../../../logger.js';
import type { InsertOptions } from '../client.js';
import { Backlog } from './backlog.js';
import { cutBatch, LineBatcher, type Batch } from './batcher.js';
import { DeadLetterStore, type DeadLetter } from './dead-letters.js';
import { classifyInsertError, type InsertError } from './errors.js';
import { insertIsolating, type Delivery, type Refused } from './isolate.js';
import { countLines, joinLines, lines, type PartitionOf } from './lines.js';
import { Spool } from './spool.js';
import { WriteAheadLog } from './wal.js';

/**
 * When a record counts as accepted (docs/log-pipeline.md, "Acknowledgement"): `memory` once it is in the writer's
 * buffer (the death of the process loses up to one flush window); `durable` once it is written to the write-ahead
 * file (the death of the process loses nothing; a power loss, what the group fdatasync had not covered yet);
 * `fsync` once that fdatasync covers it (a power loss loses nothing; the answer waits, so pipelined requests are not
 * served).
 */
export type AckMode = 'memory' | 'durable' | 'fsync';

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
  deadLetterDir: string;
  /** Default `memory`. `durable` and `fsync` write every accepted line to the write-ahead file; in `fsync`, accept() is followed by synced() before answering. */
  ack?: AckMode;
  /** The write-ahead segments; read back at start whatever the mode (a node switched to `memory` after a crash still replays them). */
  walDir?: string;
  /**
   * Told, after a batch read back from the write-ahead file is stored, of its rows and their columns, so that
   * what its first insert (cut short by the crash) left half done is mended: rows stored twice, or skipped by
   * the replay as duplicates (the logs actor; log-replay.ts). A rejection keeps the batch and retries.
   */
  afterReplay?: (rows: Buffer, columns: readonly string[] | undefined) => Promise<void>;
  /**
   * Called once every batch read back is stored, before the first new batch goes in (the logs actor repairs the
   * rollups). A rejection is retried with the backoff; after 5 the writer logs an error and goes on without it.
   */
  afterRecovery?: () => Promise<void>;
  /**
   * At shutdown, how long (ms) the writer goes on inserting its backlog before it leaves the rest in the disk spool
   * for the next start (default 5000): a backlog past the store's rate can be a spool of millions of records, and
   * a shutdown that outlasts the orchestrator's grace period is a kill.
   */
  stopInsertMs?: number;
  /** With `maxPartitions`: a batch is cut so that no insert spans more partitions. */
  partitionOf?: PartitionOf;
  maxPartitions?: number;
}

/** The transport, as far as the writer needs it. */
export interface Inserter {
  insert(table: string, rows: Buffer, options?: InsertOptions): Promise<void>;
}

export interface WriterStats {
  accepted: number;
  stored: number;
  spooled: number;
  /** Records refused by accept() (backpressure). */
  refused: number;
  /** Failed inserts, refusals and outages together. */
  insertFailures: number;
  insertRefusals: number;
  insertOutages: number;
  batches: number;
  /** Records moved to the dead letters, and the dead letters written. */
  deadLettered: number;
  deadLetterBatches: number;
  /** The last failed insert, whatever came after it. */
  lastError: { code: number | string | null; message: string; at: string } | null;
  /** Records per insert and insert seconds, for the metrics histograms. */
  onInsert?: (records: number, seconds: number) => void;
}

export interface ReplayResult {
  id: string;
  /** Rows now stored. */
  stored: number;
  /** Rows refused again: they stay in the dead letter, with the new error. */
  refused: number;
  error: InsertError | null;
}

const maxBackoffMs = 5000;
const defaultStopInsertMs = 5000;
/** Tries of afterRecovery before the writer goes on without it (with the backoff: about 3 s). */
const maxRecoveryTries = 5;

export class TableWriter {
  readonly stats: WriterStats = {
    accepted: 0, stored: 0, spooled: 0, refused: 0, insertFailures: 0, insertRefusals: 0, insertOutages: 0,
    batches: 0, deadLettered: 0, deadLetterBatches: 0, lastError: null,
  };
  readonly deadLetters: DeadLetterStore;
  private readonly batcher: LineBatcher;
  private readonly backlog: Backlog;
  /** Present when a walDir is given: it holds the segments left by a crash, and in `durable` mode every accepted line. */
  private readonly wal: WriteAheadLog | undefined;
  private pumping: Promise<void> | null = null;
  private backoffMs = 0;
  private retrying = false;
  /** Batches read back from the write-ahead file are waiting, and afterRecovery has not run yet. */
  private recovering = false;
  private recoveryFailures = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Past this (performance.now()), a stopping writer inserts no further batch. */
  private stopDeadline = Infinity;
  private readonly replaying = new Map<string, Promise<ReplayResult | null>>();
  /** Told after rows are in ClickHouse, with the masters they held (null: not known). */
  onStored?: (masters: ReadonlySet<number> | null) => void;

  constructor(
    private readonly opts: WriterOptions,
    private readonly target: Inserter,
    private readonly log: Logger,
  ) {
    const spool = new Spool(opts.spoolDir);
    if (spool.size > 0) log.info({ batches: spool.size, bytes: spool.bytes }, 'replaying the log spool');
    this.backlog = new Backlog(spool, opts, log);
    this.backlog.onSpooled = (records) => (this.stats.spooled += records);
    const durable = opts.ack === 'durable' || opts.ack === 'fsync';
    // In `memory` mode a compact batch is still written whole before its insert (wal.ts, perBatch): replayed after a
    // crash between `logs` and its views, so the rollups never stay short. JSONEachRow objects (no columns) are not.
    this.wal = opts.walDir ? new WriteAheadLog(opts.walDir, opts.columns ?? [], log, !durable) : undefined;
    if (durable && !this.wal) throw new Error(`${opts.ack} acknowledgement needs a write-ahead directory (walDir)`);
    if (durable && !opts.columns) throw new Error(`${opts.ack} acknowledgement needs the column list`);
    this.batcher = new LineBatcher(
      opts,
      (batch) => {
        this.backlog.push(batch);
        this.kick();
      },
      durable || opts.columns ? this.wal : undefined,
      // Only with the write-ahead file: its waiting lines are already on disk, so a longer wait risks nothing; in memory mode
      // the flush interval bounds what a crash can lose (docs/log-pipeline.md). Not during an outage: batches then
      // go on to the spool as before.
      durable ? () => !this.retrying && this.backlog.pendingRecords > 0 : undefined,
    );
    this.deadLetters = new DeadLetterStore(opts.deadLetterDir);
    // Rows acknowledged before a crash: inserted before any new one, cut as their first try was.
    const recovered = this.wal?.recovered ?? [];
    if (recovered.length > 0) {
      log.info({ segments: recovered.length, bytes: recovered.reduce((n, r) => n + r.data.length, 0) }, 'replaying the log write-ahead file');
    }
    for (const r of recovered) {
      for (const b of cutBatch(r.data, undefined, null, { ...opts, columns: r.columns }, r.segment)) {
        b.recovered = true;
        this.backlog.push(b);
      }
    }
    this.recovering = recovered.length > 0 && opts.afterRecovery !== undefined;
  }

  /**
   * In `fsync` mode, resolves once everything accepted so far is fdatasynced in
   * the write-ahead file (rejects with WalWriteError when the disk refused it);
   * null in the other modes, where acceptance is the answer.
   */
  synced(): Promise<void> | null {
    return this.opts.ack === 'fsync' ? this.wal!.sync() : null;
  }

  /** How long written lines waited for their fdatasync (ms): the last round's, and the largest since start. */
  get walSyncLag(): { lastMs: number; maxMs: number } | null {
    return this.opts.ack === 'memory' || !this.wal ? null : this.wal.syncLag;
  }

  /** Records waiting anywhere (memory, spool), for metrics and tests. */
  get backlogState(): { memoryBytes: number; spoolBytes: number; spoolBatches: number; pendingRecords: number } {
    return {
      memoryBytes: this.backlog.memoryBytes + this.batcher.bytes,
      spoolBytes: this.backlog.spoolBytes,
      spoolBatches: this.backlog.spoolBatches,
      pendingRecords: this.batcher.records + this.backlog.pendingRecords,
    };
  }

  /** Inserts are failing now (an outage being retried), or dead letters wait for an operator. */
  get degraded(): boolean {
    return this.retrying || this.deadLetters.size > 0;
  }

  start(): void {
    this.kick();
  }

  /**
   * Takes NDJSON text holding `records` records of `masters` (no trailing
   * newline), in the form `columns` says (arrays, or objects without it).
   * false: memory and spool are both full; the caller must refuse with 503.
   * Throws WalWriteError when the write-ahead file refuses the lines (a full
   * disk): they are not taken either.
   */
  accept(ndjson: string, records: number, masters: number | Iterable<number>): boolean {
    const bytes = this.batcher.write(ndjson);
    // In `fsync` mode a write-ahead file that cannot be synced acknowledges nothing, so nothing more is taken.
    const syncDown = this.opts.ack === 'fsync' && this.wal!.syncFailing !== null;
    if (this.stopped || syncDown || this.backlog.full(this.batcher.bytes + bytes)) {
      this.stats.refused += records;
      return false;
    }
    try {
      this.batcher.commit(bytes, records, masters);
    } catch (err) {
      this.stats.refused += records;
      throw err;
    }
    this.stats.accepted += records;
    return true;
  }

  /**
   * Writes what is buffered now and waits until memory and spool are empty,
   * unless ClickHouse is failing (then it returns at once: those records are
   * written when it recovers).
   */
  async flushNow(): Promise<void> {
    this.batcher.seal();
    if (this.retrying) {
      // Try now rather than wait out the backoff; a failure sets retrying again and ends the loop.
      clearTimeout(this.retryTimer);
      this.retrying = false;
    }
    while ((this.backlog.busy || this.recovering) && !this.retrying && !this.stopped) {
      this.kick();
      await this.pumping;
      await this.backlog.drained();
    }
  }

  /**
   * Writes for up to `stopInsertMs`, then spools the rest; after it resolves nothing accepted is only in memory,
   * and what was not inserted is in the spool, which the next start replays.
   */
  async stop(): Promise<void> {
    // Before the seal: sealing hands the last batch over, and that starts a pass.
    this.stopDeadline = performance.now() + (this.opts.stopInsertMs ?? defaultStopInsertMs);
    this.batcher.seal();
    this.batcher.stop();
    this.stopped = true;
    clearTimeout(this.retryTimer);
    await this.pumping;
    // One last pass unless ClickHouse is failing: then do not wait out retries, spool instead.
    if (!this.retrying) await this.pump();
    await this.backlog.spillAll();
    await this.wal?.close(); // the spooled batches' segments are trimmed
  }

  /**
   * Inserts a dead letter's rows again (after its cause was fixed): the rows
   * ClickHouse takes are stored, those it refuses again stay in the dead
   * letter with the new error. An outage leaves the rest in the dead letter
   * and is returned as the error.
   */
  replay(id: string): Promise<ReplayResult | null> {
    // A second replay of the same dead letter while one runs shares it: its rows are inserted once.
    let running = this.replaying.get(id);
    if (!running) {
      running = this.replayOnce(id).finally(() => this.replaying.delete(id));
      this.replaying.set(id, running);
    }
    return running;
  }

  private async replayOnce(id: string): Promise<ReplayResult | null> {
    const letter = this.deadLetters.get(id);
    if (!letter) return null;
    const rows = await this.deadLetters.rows(id);
    const delivery = await insertIsolating((data) => this.target.insert(letter.table, data, insertOptions(data, letter.columns)), [rows]);
    this.count(delivery);
    const refusedRows = delivery.refused.flatMap((r) => r.rows);
    const left = [...refusedRows, ...(delivery.outage?.left ?? [])];
    const error = delivery.outage?.error ?? delivery.refused[0]?.error ?? null;
    if (left.length === 0) await this.deadLetters.remove(id);
    else {
      const data = joinLines(left);
      await this.deadLetters.replace(id, { ...letterOf(letter, error), records: countLines(data) }, data);
    }
    if (delivery.stored > 0) this.onStored?.(null);
    return { id, stored: delivery.stored, refused: refusedRows.length, error };
  }

  private kick(): void {
    if (this.retrying && !this.stopped) return; // the retry timer will pump
    this.pumping ??= this.pump().finally(() => {
      this.pumping = null;
    });
  }

  /** Inserts batches in order until none is left or an outage stops it; a failure of the disk counts as one. */
  private async pump(): Promise<void> {
    try {
      await this.pumpBatches();
    } catch (err) {
      this.log.error({ err }, 'log writer failed (spool or dead letters); will retry');
      this.retryLater();
    }
  }

  private async pumpBatches(): Promise<void> {
    for (;;) {
      if (performance.now() >= this.stopDeadline) return; // shutting down: the rest waits in the spool
      if (this.recovering && !this.backlog.holdsRecovered) {
        // Every batch read back is in: nothing new is inserted before the recovery's own check ran.
        try {
          await this.opts.afterRecovery!();
          this.recovering = false;
        } catch (err) {
          // Retried a few times (an outage passes), then given up: a check that keeps failing must not stop ingestion.
          if (++this.recoveryFailures < maxRecoveryTries) {
            this.log.warn({ err }, 'the check after replaying the log write-ahead file failed; will retry');
            this.retryLater();
            return;
          }
          this.log.error({ err }, `the check after replaying the log write-ahead file failed ${maxRecoveryTries} times; going on without it`);
          this.recovering = false;
        }
      }
      const head = await this.backlog.head();
      if (!head) return;
      if (head.unreadable) {
        // No column list, so no insert can read these rows: they go to the dead letters whole.
        const error: InsertError = { kind: 'refusal', code: null, message: head.unreadable };
        await this.setApart([{ rows: lines(head.batch.data), error }], head.batch);
        await this.backlog.settle(head, null);
        continue;
      }
      // Never insert more than the write-ahead file holds: after a crash it is what is replayed, under the same tokens.
      if (head.batch.segment) await head.batch.segment.flushed;
      const started = performance.now();
      const delivery = await insertIsolating(
        (rows) => this.target.insert(this.opts.table, rows, insertOptions(rows, head.batch.columns)),
        head.batch.pieces ?? [head.batch.data],
        head.batch.pieces ? undefined : head.batch.records,
      );
      this.count(delivery);
      const unwritten = await this.setApart(delivery.refused, head.batch);
      if (unwritten.error) {
        // The disk refused the dead letters: keep the rows not written to try again, as for an outage.
        const left = [...unwritten.rows, ...(delivery.outage?.left ?? [])];
        delivery.outage = { error: unwritten.error, left };
      }
      if (delivery.outage) {
        await this.backlog.settle(head, delivery.outage.left);
        this.log.warn({ err: delivery.outage.error, records: head.batch.records }, 'log insert failed; will retry');
        this.retryLater();
        return;
      }
      // Before the segment goes: should this fail (an outage), the batch stays and the check runs again.
      if (head.batch.recovered && this.opts.afterReplay) await this.opts.afterReplay(head.batch.data, head.batch.columns);
      this.backoffMs = 0;
      this.retrying = false;
      this.stats.batches++;
      if (delivery.stored > 0) this.stats.onInsert?.(delivery.stored, (performance.now() - started) / 1000);
      await this.backlog.settle(head, null);
      // Masters are known only when the batch went in whole.
      if (delivery.stored > 0) this.onStored?.(delivery.refused.length === 0 ? head.batch.masters : null);
    }
  }

  /** Retries after a growing pause (100 ms doubling to 5 s); at shutdown, not at all. */
  private retryLater(): void {
    this.backoffMs = Math.min(this.backoffMs ? this.backoffMs * 2 : 100, maxBackoffMs);
    this.retrying = true;
    if (this.stopped) return;
    this.retryTimer = setTimeout(() => {
      this.retrying = false;
      this.kick();
    }, this.backoffMs);
    this.retryTimer.unref();
  }

  /** Statistics of one delivery. */
  private count(d: Delivery): void {
    this.stats.stored += d.stored;
    this.stats.insertRefusals += d.refusals;
    this.stats.insertFailures += d.refusals;
    const last = d.outage?.error ?? d.refused[d.refused.length - 1]?.error;
    if (d.outage) {
      this.stats.insertOutages++;
      this.stats.insertFailures++;
    }
    if (last) this.stats.lastError = { code: last.code, message: last.message, at: new Date().toISOString() };
  }

  /**
   * Writes refused rows to the dead letters, one per error code. Should the
   * disk fail, says which rows are not written (and why) so they are kept.
   */
  private async setApart(refused: Refused[], batch: Batch): Promise<{ rows: Buffer[]; error: InsertError | null }> {
    const at = new Date().toISOString();
    // A batch replayed after a crash may have been isolated before it: its refused rows are in the dead letters already.
    const held = batch.recovered && refused.length > 0 ? await this.deadLetters.heldRows() : null;
    for (let i = 0; i < refused.length; i++) {
      const { error } = refused[i]!;
      const rows = held ? refused[i]!.rows.filter((r) => !held.has(r.toString('latin1', 0, r[r.length - 1] === 0x0a ? r.length - 1 : r.length))) : refused[i]!.rows;
      if (rows.length === 0) continue;
      try {
        await this.deadLetters.add(
          { table: this.opts.table, ...(batch.columns ? { columns: [...batch.columns] } : {}), records: rows.length, code: error.code, message: error.message, at },
          joinLines(rows),
        );
      } catch (err) {
        this.log.error({ err }, 'could not write log dead letters; their rows are kept and retried');
        const failure = classifyInsertError(err);
        return { rows: refused.slice(i).flatMap((r) => r.rows), error: { ...failure, kind: 'outage' } };
      }
      this.stats.deadLettered += rows.length;
      this.stats.deadLetterBatches++;
      this.log.error({ code: error.code, records: rows.length, err: error.message }, 'ClickHouse refused log rows; moved to the dead letters');
    }
    return { rows: [], error: null };
  }
}

/**
 * Every insert carries a deduplication token: the hash of its bytes. The same
 * rows inserted again (a write-ahead segment or spool file replayed after a
 * crash that came after its insert) are then dropped by ClickHouse, in `logs`
 * and in every rollup (sql/clickhouse/009_insert_dedup.sql). Rows hold unique
 * ids, so two different inserts never share bytes.
 */
const insertOptions = (rows: Buffer, columns?: readonly string[]): InsertOptions => ({
  ...(columns ? { format: 'JSONCompactEachRow' as const, columns } : {}),
  dedupToken: dedupTokenOf(rows),
});

/** The deduplication token of an insert of these bytes. */
export const dedupTokenOf = (rows: Buffer): string => createHash('sha1').update(rows).digest('base64url');

const letterOf = (l: DeadLetter, error: InsertError | null): Omit<DeadLetter, 'id' | 'bytes'> => ({
  table: l.table,
  ...(l.columns ? { columns: l.columns } : {}),
  records: l.records,
  code: error?.code ?? l.code,
  message: error?.message ?? l.message,
  at: error ? new Date().toISOString() : l.at,
});
