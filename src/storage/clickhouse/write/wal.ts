/**
 * The write-ahead file of `durable` acknowledgement (SVC_LOG_ACK): every
 * accepted line is appended here, and its request is answered only once an
 * fdatasync covers it. Group commit: one write and one fdatasync cover every
 * line appended while the previous ones ran, so a sync costs one round per
 * burst of requests, not one per request.
 *
 * The file is cut into segments, one per batch: the batcher rotates it when it
 * seals a batch, so a segment holds exactly the bytes of the batch (or of the
 * batches one seal cut by partition). A segment is removed once every batch
 * cut from it is stored in ClickHouse, set apart as a dead letter, or in the
 * spool (itself fsynced): the file is trimmed only once its rows are safe
 * elsewhere. A batch is inserted only after its whole segment is on disk, so
 * that a crash never leaves a segment shorter than what ClickHouse took.
 *
 * At start the segments left are read back (`recovered`) and inserted before
 * anything else, with the same insert deduplication tokens as their first try
 * (the token is the hash of the bytes: writer.ts), so a batch that had
 * reached ClickHouse before the crash is not counted twice.
 *
 * A segment file `<seq>.wal` starts with a line holding the JSON array of its
 * columns (as compact spool files do), then the rows as accepted. What no
 * fdatasync covered may be torn: a last line without its newline, or a tail
 * of zeros after a power loss; both are cut off when the file is read back
 * (valid rows never hold a NUL byte: JSON escapes it).
 */
import { mkdirSync, readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { open, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../../logger.js';

export class WalSegment {
  /** Batches cut from it and not yet done with; the segment goes when it falls to 0 after being sealed. */
  pending = 0;
  sealed = false;
  /** Bytes on disk (fdatasynced), header included. */
  written = 0;
  /** Staged bytes not yet written, in order. */
  chunks: Buffer[] = [];
  fd: FileHandle | undefined;
  /** The file exists on disk (it is created by its first write). */
  created = false;
  queued = false;
  released = false;
  /** Resolves once the segment is sealed and all its bytes are on disk. */
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

const name = (seq: number): string => `${String(seq).padStart(12, '0')}.wal`;
/** After a failed write (a full disk), the next round starts after this pause or at the next sync asked for. */
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
  /** The last write or fdatasync failed; cleared by the next that succeeds. */
  failing: Error | null = null;
  /** Segments found at start, oldest first: their rows were accepted and must be inserted. */
  readonly recovered: RecoveredSegment[] = [];
  /** fdatasync rounds, for tests and metrics. */
  rounds = 0;

  constructor(
    readonly dir: string,
    private readonly columns: readonly string[],
    private readonly log: Logger,
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
        unlinkSync(file); // nothing that an fdatasync covered: no row of it was acknowledged
        continue;
      }
      const segment = new WalSegment(seq, file, (s) => this.release(s));
      segment.sealed = true;
      segment.created = true;
      segment.markFlushed();
      this.recovered.push({ segment, ...read });
    }
    this.current = this.next();
  }

  /** Stages one committed line (or several, each ending in a newline) of the current segment. */
  append(bytes: Buffer): void {
    const s = this.current;
    if (!s.created && s.chunks.length === 0) s.chunks.push(Buffer.from(`${JSON.stringify(this.columns)}\n`));
    s.chunks.push(Buffer.from(bytes)); // a copy: the batcher reuses its buffer
    if (!s.queued) {
      s.queued = true;
      this.dirty.push(s);
    }
  }

  /** Closes the current segment (its batch was sealed) and returns it; later lines go to a new one. */
  rotate(): WalSegment {
    const s = this.current;
    s.sealed = true;
    this.current = this.next();
    if (!s.queued) {
      s.queued = true;
      this.dirty.push(s); // so that its flushed promise settles even when nothing is left to write
    }
    this.schedule();
    return s;
  }

  /** Resolves once every line appended so far is on disk; rejects when the disk refused them. */
  sync(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      this.schedule();
    });
  }

  /** Waits for the rounds under way, then trims what is released and closes the files. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    while (this.running) await this.running;
    if (this.dirty.length > 0 || this.released.length > 0 || this.waiters.length > 0) {
      this.closed = false;
      await this.round();
      this.closed = true;
    }
    for (const s of this.dirty) await s.fd?.close().catch(() => undefined);
    await this.current.fd?.close().catch(() => undefined);
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
          if (this.failing) this.retryLater();
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

  /** Writes and fdatasyncs every staged segment, then answers the waiters of that round, then trims. */
  private async round(): Promise<void> {
    const waiters = this.waiters;
    const dirty = this.dirty;
    this.waiters = [];
    this.dirty = [];
    let i = 0;
    try {
      for (; i < dirty.length; i++) await this.writeOut(dirty[i]!);
      this.rounds++;
      this.failing = null;
      for (const w of waiters) w.resolve();
    } catch (err) {
      this.failing = err as Error;
      this.log.error({ err }, 'log write-ahead file could not be written; requests are refused until it can');
      // What was not written stays staged, in order, for the next round.
      this.dirty = [...dirty.slice(i), ...this.dirty];
      for (const w of waiters) w.reject(err);
    }
    if (!this.failing) await this.trim();
  }

  private async writeOut(s: WalSegment): Promise<void> {
    const chunks = s.chunks;
    s.chunks = [];
    try {
      if (chunks.length > 0) {
        let fresh = false;
        if (!s.fd) {
          s.fd = await open(s.file, s.created ? 'r+' : 'w');
          fresh = !s.created;
          s.created = true;
        }
        const total = chunks.reduce((n, c) => n + c.length, 0);
        const { bytesWritten } = await s.fd.writev(chunks, s.written);
        if (bytesWritten !== total) throw Object.assign(new Error(`short write to ${s.file} (${bytesWritten} of ${total} bytes)`), { code: 'ENOSPC' });
        await s.fd.datasync();
        if (fresh) await syncDir(this.dir); // the new file's name must survive a power loss too
        s.written += total;
      }
    } catch (err) {
      // Drop a partial write, so that the next round appends right after the last synced byte.
      await s.fd?.truncate(s.written).catch(() => undefined);
      s.chunks = [...chunks, ...s.chunks];
      throw err;
    }
    if (s.chunks.length > 0) {
      this.dirty.push(s); // appended meanwhile: next round
      return;
    }
    s.queued = false;
    if (s.sealed) {
      await s.fd?.close();
      s.fd = undefined;
      s.markFlushed();
    }
  }

  /** Removes the segments whose rows are all safe elsewhere (never one with bytes still staged). */
  private async trim(): Promise<void> {
    const keep: WalSegment[] = [];
    const released = this.released;
    this.released = [];
    for (const s of released) {
      if (s.queued || s.chunks.length > 0) {
        keep.push(s);
        continue;
      }
      await s.fd?.close().catch(() => undefined);
      s.fd = undefined;
      if (s.created) await unlink(s.file).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') this.log.warn({ err, file: s.file }, 'could not remove a log write-ahead segment');
      });
    }
    this.released.push(...keep);
  }
}

async function syncDir(dir: string): Promise<void> {
  const h = await open(dir, 'r');
  try {
    await h.sync();
  } finally {
    await h.close();
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
