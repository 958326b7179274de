/**
 * The write-ahead file behind acknowledgement (SVC_LOG_ACK `durable` and
 * `fsync`): every accepted line is written here, with a plain write(2), before
 * its request is answered, so that the death of the process (SIGKILL, the OOM
 * killer, a crash) loses none of them: the bytes are the kernel's from then on.
 * Group commit then makes them survive a power loss too: one fdatasync covers
 * every line written while the previous one ran, so a sync costs one round per
 * burst of requests, not one per request. In `fsync` mode the answer waits for
 * that round (`sync()`); in `durable` mode it does not (docs/log-pipeline.md,
 * "Acknowledgement", says why: uWebSockets.js cannot hold an answer back for a
 * client that pipelines).
 *
 * The write is synchronous on purpose: the handler answers in the same turn,
 * which is what lets pipelined requests through, and it costs a few
 * microseconds (the page cache, no disk wait).
 *
 * The file is cut into segments, one per batch: the batcher rotates it when it
 * seals a batch, so a segment holds exactly the bytes of the batch (or of the
 * batches one seal cut by partition). A segment is removed once every batch
 * cut from it is stored in ClickHouse, set apart as a dead letter, or in the
 * spool (itself fsynced): the file is trimmed only once its rows are safe
 * elsewhere. A batch is inserted only after its whole segment is fdatasynced,
 * so that a power loss never leaves a segment shorter than what ClickHouse took.
 *
 * At start the segments left are read back (`recovered`) and inserted before
 * anything else, with the same insert deduplication tokens as their first try
 * (the token is the hash of the bytes: writer.ts), so a batch that had
 * reached ClickHouse before the crash is not counted twice.
 *
 * A segment file `<seq>.wal` starts with a line holding the JSON array of its
 * columns (as compact spool files do), then the rows as accepted. What no
 * fdatasync covered may be torn after a power loss: a last line without its
 * newline, or a tail of zeros; both are cut off when the file is read back
 * (valid rows never hold a NUL byte: JSON escapes it).
 */
import { close, closeSync, fdatasync, fsync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync, unlink, unlinkSync, writeSync, writev } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from '../../../logger.js';

const fdatasyncAsync = promisify(fdatasync);
const fsyncAsync = promisify(fsync);
const closeAsync = promisify(close);
const unlinkAsync = promisify(unlink);
const writevAsync = promisify(writev);

export class WalSegment {
  /** Batches cut from it and not yet done with; the segment goes when it falls to 0 after being sealed. */
  pending = 0;
  sealed = false;
  /** Bytes written (in the kernel's hands), header included. */
  written = 0;
  /** Bytes an fdatasync covers. */
  synced = 0;
  fd: number | undefined;
  /** Its name is in a directory an fsync covered (once, after its creation). */
  named = false;
  queued = false;
  released = false;
  /** Resolves once the segment is sealed and all its bytes are fdatasynced. */
  readonly flushed: Promise<void>;
  markFlushed!: () => void;

  constructor(
    readonly seq: number,
    readonly file: string,
    private readonly onDone: (s: WalSegment) => void,
  ) {
    this.flushed = new Promise((resolve) => (this.markFlushed = resolve));
  }

  /** One batch cut from this segment is stored, set apart or spooled. */
  doneWith(): void {
    if (--this.pending <= 0 && this.sealed) this.onDone(this);
  }
}

export interface RecoveredSegment {
  segment: WalSegment;
  data: Buffer;
  columns: readonly string[];
}

/** The write-ahead file could not take a line (a full disk, an I/O error): the line is not in it, so not acknowledged. */
export class WalWriteError extends Error {
  constructor(cause: Error) {
    super(`the log write-ahead file could not be written: ${cause.message}`, { cause });
  }
}

const name = (seq: number): string => `${String(seq).padStart(12, '0')}.wal`;
/** After a failed fdatasync, the next round starts after this pause or at the next sync asked for. */
const retryMs = 200;

export class WriteAheadLog {
  private seq = 0;
  private current: WalSegment;
  private dirty: WalSegment[] = [];
  private waiters: Array<{ resolve: () => void; reject: (err: unknown) => void }> = [];
  private released: WalSegment[] = [];
  private running: Promise<void> | null = null;
  private scheduled = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** When the oldest line no fdatasync covers yet was written (ms, performance.now()); 0 when none. */
  private unsyncedSince = 0;
  /** The last write failed; cleared by the next that succeeds. */
  failing: Error | null = null;
  /** The last fdatasync failed; cleared by the next round that succeeds. */
  syncFailing: Error | null = null;
  /** Segments found at start, oldest first: their rows were accepted and must be inserted. */
  readonly recovered: RecoveredSegment[] = [];
  /** fdatasync rounds, for tests and metrics. */
  rounds = 0;
  /**
   * How long written lines waited for their fdatasync, in ms: the last round's oldest line, and the largest since
   * start. In `durable` mode this is what a power loss could take of what was acknowledged.
   */
  readonly syncLag = { lastMs: 0, maxMs: 0 };

  constructor(
    readonly dir: string,
    private readonly columns: readonly string[],
    private readonly log: Logger,
    /**
     * `memory` acknowledgement: no line is written as it is accepted; each sealed batch is written whole (off the
     * event loop, no fdatasync) before its insert and removed once stored. A process death can still lose what was
     * not sealed (the flush window), but a batch cut short between `logs` and its views is replayed at start under
     * the same token, so the rollups never stay short of the raw table.
     */
    readonly perBatch = false,
  ) {
    mkdirSync(dir, { recursive: true });
    for (const f of readdirSync(dir).sort()) {
      const m = /^(\d{12})\.wal$/.exec(f);
      if (!m) continue;
      const seq = Number(m[1]);
      this.seq = Math.max(this.seq, seq);
      const file = join(dir, f);
      const read = readSegment(readFileSync(file));
      if (!read) {
        unlinkSync(file); // no complete row: none of it was acknowledged
        continue;
      }
      const segment = new WalSegment(seq, file, (s) => this.release(s));
      segment.sealed = true;
      segment.named = true;
      segment.markFlushed();
      this.recovered.push({ segment, ...read });
    }
    this.current = this.next();
  }

  /**
   * Writes one committed line (or several, each ending in a newline) to the current segment, synchronously: when it
   * returns, the bytes are the kernel's. Throws WalWriteError when the disk refuses them; nothing of them stays.
   */
  append(bytes: Buffer): void {
    const s = this.current;
    try {
      if (s.fd === undefined) s.fd = openSync(s.file, s.written > 0 ? 'r+' : 'w');
      if (s.written === 0) this.writeAll(s, Buffer.from(`${JSON.stringify(this.columns)}\n`));
      this.writeAll(s, bytes);
    } catch (err) {
      this.failing = err as Error;
      // A segment with nothing in it yet is reopened by the next append (no round uses its descriptor): a file
      // replaced meanwhile is written afresh. One with lines keeps its descriptor; the next write retries on it.
      if (s.fd !== undefined && s.written === 0) {
        try {
          closeSync(s.fd);
        } catch {
          // already unusable
        }
        s.fd = undefined;
      }
      throw new WalWriteError(err as Error);
    }
    this.failing = null;
    if (this.unsyncedSince === 0) this.unsyncedSince = performance.now();
    this.queue(s);
    this.schedule();
  }

  /** Closes the current segment (its batch, `data`, was sealed) and returns it; later lines go to a new one. */
  rotate(data: Buffer): WalSegment {
    const s = this.current;
    s.sealed = true;
    this.current = this.next();
    if (this.perBatch) {
      this.writeBatch(s, data);
      return s;
    }
    this.queue(s); // so that its flushed promise settles even when nothing is left to sync
    this.schedule();
    return s;
  }

  /**
   * `perBatch`: the segment's whole batch in one write on libuv's pool, then the segment counts as flushed (its insert
   * may go). A failed write is logged and the batch goes on without a segment: `memory` mode promised no more.
   */
  private writeBatch(s: WalSegment, data: Buffer): void {
    const header = Buffer.from(`${JSON.stringify(this.columns)}\n`);
    void (async () => {
      let fd: number | undefined;
      try {
        fd = openSync(s.file, 'w');
        s.fd = fd;
        const total = header.length + data.length;
        const { bytesWritten: written } = await writevAsync(fd, [header, data], 0);
        if (written !== total) throw Object.assign(new Error(`short write to ${s.file} (${written} of ${total} bytes)`), { code: 'ENOSPC' });
        s.written = s.synced = total;
      } catch (err) {
        this.log.warn({ err, file: s.file }, 'could not write a log batch segment; the batch is inserted without one');
        // A part of the batch must not be replayed beside the whole batch's insert.
        try {
          unlinkSync(s.file);
        } catch {
          // never created
        }
      } finally {
        if (fd !== undefined) await closeAsync(fd).catch(() => undefined);
        s.fd = undefined;
        s.markFlushed();
      }
    })();
  }

  /** Resolves once every line written so far is fdatasynced; rejects when the disk refused the fdatasync. */
  sync(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      this.schedule();
    });
  }

  /** Waits for the rounds under way, runs a last one, trims what is released and closes the files. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    while (this.running) await this.running;
    if (this.dirty.length > 0 || this.released.length > 0 || this.waiters.length > 0) await this.round();
    for (const s of this.dirty) if (s.fd !== undefined) await closeAsync(s.fd).catch(() => undefined);
    if (this.current.fd !== undefined) await closeAsync(this.current.fd).catch(() => undefined);
  }

  /** write(2) until every byte is taken; on a failure the segment is cut back to its last whole line. */
  private writeAll(s: WalSegment, bytes: Buffer): void {
    let done = 0;
    try {
      while (done < bytes.length) {
        const n = writeSync(s.fd!, bytes, done, bytes.length - done, s.written + done);
        if (n <= 0) throw Object.assign(new Error(`short write to ${s.file}`), { code: 'ENOSPC' });
        done += n;
      }
    } catch (err) {
      if (done > 0) {
        try {
          ftruncateSync(s.fd!, s.written);
        } catch {
          // the torn tail is cut at read-back in any case (a line without its newline)
        }
      }
      throw err;
    }
    s.written += bytes.length;
  }

  private queue(s: WalSegment): void {
    if (s.queued) return;
    s.queued = true;
    this.dirty.push(s);
  }

  private next(): WalSegment {
    const seq = ++this.seq;
    return new WalSegment(seq, join(this.dir, name(seq)), (s) => this.release(s));
  }

  private release(s: WalSegment): void {
    if (s.released) return;
    s.released = true;
    this.released.push(s);
    this.schedule();
  }

  /** A round soon: requests parsed in the same turn of the event loop share it. */
  private schedule(): void {
    if (this.scheduled || this.running || this.closed) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.closed) return; // close() runs the last round itself
      this.running ??= this.round().finally(() => {
        this.running = null;
        if (this.waiters.length > 0 || this.dirty.length > 0 || this.released.length > 0) {
          if (this.syncFailing) this.retryLater();
          else this.schedule();
        }
      });
    });
  }

  private retryLater(): void {
    if (this.retryTimer || this.closed) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.schedule();
    }, retryMs);
    this.retryTimer.unref();
  }

  /** fdatasyncs every segment written since the last round, then answers that round's waiters, then trims. */
  private async round(): Promise<void> {
    const waiters = this.waiters;
    const dirty = this.dirty;
    const since = this.unsyncedSince;
    this.waiters = [];
    this.dirty = [];
    this.unsyncedSince = 0;
    let i = 0;
    try {
      for (; i < dirty.length; i++) await this.syncOut(dirty[i]!);
      this.rounds++;
      this.syncFailing = null;
      if (since > 0) {
        this.syncLag.lastMs = performance.now() - since;
        if (this.syncLag.lastMs > this.syncLag.maxMs) this.syncLag.maxMs = this.syncLag.lastMs;
      }
      for (const w of waiters) w.resolve();
    } catch (err) {
      this.syncFailing = err as Error;
      this.log.error({ err }, 'log write-ahead file could not be synced; fsync acknowledgements are refused until it can');
      // What was not synced stays queued, in order, for the next round.
      this.dirty = [...dirty.slice(i), ...this.dirty];
      if (since > 0 && (this.unsyncedSince === 0 || since < this.unsyncedSince)) this.unsyncedSince = since;
      for (const w of waiters) w.reject(new WalWriteError(err as Error));
    }
    if (!this.syncFailing) await this.trim();
  }

  private async syncOut(s: WalSegment): Promise<void> {
    // Lines written after this point wait for the next round; those before it are covered by this fdatasync.
    s.queued = false;
    const upTo = s.written;
    const sealed = s.sealed;
    try {
      if (s.fd !== undefined && upTo > s.synced) {
        await fdatasyncAsync(s.fd);
        if (!s.named) {
          await syncDir(this.dir); // the new file's name must survive a power loss too
          s.named = true;
        }
        s.synced = upTo;
      }
    } catch (err) {
      s.queued = true; // back in the queue (round() puts it there)
      throw err;
    }
    if (s.written > s.synced) {
      this.queue(s); // written meanwhile: next round
      return;
    }
    if (sealed) {
      if (s.fd !== undefined) await closeAsync(s.fd).catch(() => undefined);
      s.fd = undefined;
      s.markFlushed();
    }
  }

  /** Removes the segments whose rows are all safe elsewhere (never one with bytes not yet synced). */
  private async trim(): Promise<void> {
    const keep: WalSegment[] = [];
    const released = this.released;
    this.released = [];
    for (const s of released) {
      if (s.queued || s.written > s.synced) {
        keep.push(s);
        continue;
      }
      if (s.fd !== undefined) await closeAsync(s.fd).catch(() => undefined);
      s.fd = undefined;
      if (s.written > 0) await unlinkAsync(s.file).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') this.log.warn({ err, file: s.file }, 'could not remove a log write-ahead segment');
      });
    }
    this.released.push(...keep);
  }
}

async function syncDir(dir: string): Promise<void> {
  const fd = openSync(dir, 'r');
  try {
    await fsyncAsync(fd);
  } finally {
    closeSync(fd);
  }
}

/** A segment's columns and rows, without what no fdatasync covered (a torn last line, a tail of zeros); null when no row is left. */
export function readSegment(file: Buffer): { data: Buffer; columns: string[] } | null {
  const nul = file.indexOf(0);
  const bytes = nul < 0 ? file : file.subarray(0, nul);
  const eol = bytes.indexOf(0x0a);
  if (eol < 0) return null;
  let columns: unknown;
  try {
    columns = JSON.parse(bytes.subarray(0, eol).toString('utf8'));
  } catch {
    return null;
  }
  if (!Array.isArray(columns) || !columns.every((c) => typeof c === 'string')) return null;
  const end = bytes.lastIndexOf(0x0a) + 1;
  if (end <= eol + 1) return null;
  return { data: bytes.subarray(eol + 1, end), columns: columns as string[] };
}
