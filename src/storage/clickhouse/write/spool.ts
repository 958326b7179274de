/**
 * The disk spool: batches that could not be written to ClickHouse in time,
 * one file per batch, named by a sequence number so that they replay in the
 * order they were accepted. A file is written under a temporary name and
 * renamed, so a crash never leaves half a batch under a real name.
 *
 * Two forms, told apart by the name, so that files written by an earlier
 * version still replay after an upgrade:
 * - `<seq>-<records>.ndjson`: JSONEachRow objects (what versions before the
 *   column list wrote);
 * - `<seq>-<records>.compact.ndjson`: a first line holding the JSON array of
 *   column names, then JSONCompactEachRow arrays over them. The file carries
 *   its own columns, so it replays even after the column list changes.
 */
import { mkdirSync, readdirSync, statSync, unlinkSync } from 'node:fs';
import { open, readFile, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';

export interface SpooledBatch {
  file: string;
  bytes: number;
  records: number;
  /** The file starts with a column-list line (the compact form). */
  compact: boolean;
  seq: number;
}

const name = (seq: number, records: number, compact: boolean): string =>
  `${String(seq).padStart(12, '0')}-${records}${compact ? '.compact' : ''}.ndjson`;

export class Spool {
  private readonly files: SpooledBatch[] = [];
  private seq = 0;
  bytes = 0;

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
    const bySeq = new Map<number, SpooledBatch>();
    for (const f of readdirSync(dir).sort()) {
      const path = join(dir, f);
      if (f.endsWith('.tmp')) {
        unlinkSync(path); // a batch whose write never finished was never acknowledged as spooled
        continue;
      }
      const m = /^(\d+)-(\d+)(\.compact)?\.ndjson$/.exec(f);
      if (!m) continue;
      const seq = Number(m[1]);
      const batch = { file: path, bytes: statSync(path).size, records: Number(m[2]), compact: m[3] !== undefined, seq };
      const other = bySeq.get(seq);
      if (other) {
        // A replacement and the file it replaced: the fewer records are what is left to store.
        const [keep, drop] = other.records <= batch.records ? [other, batch] : [batch, other];
        unlinkSync(drop.file);
        bySeq.set(seq, keep);
      } else bySeq.set(seq, batch);
      this.seq = Math.max(this.seq, seq);
    }
    for (const b of [...bySeq.values()].sort((x, y) => x.seq - y.seq)) {
      this.files.push(b);
      this.bytes += b.bytes;
    }
  }

  get size(): number {
    return this.files.length;
  }

  get records(): number {
    return this.files.reduce((n, f) => n + f.records, 0);
  }

  /** Spools a batch: JSONCompactEachRow lines over `columns`, or JSONEachRow objects without them. */
  async append(data: Buffer, records: number, columns?: readonly string[]): Promise<void> {
    const seq = ++this.seq;
    const { file, bytes, compact } = await this.write(seq, data, records, columns);
    this.files.push({ file, bytes, records, compact, seq });
    this.bytes += bytes;
  }

  /**
   * Replaces the oldest batch by what is left of it (`data`, fewer records):
   * written in full under the same sequence number before the old file goes.
   */
  async replaceHead(data: Buffer, records: number, columns?: readonly string[]): Promise<void> {
    const head = this.files[0];
    if (!head || records >= head.records) return;
    const { file, bytes, compact } = await this.write(head.seq, data, records, columns);
    await unlink(head.file);
    this.files[0] = { file, bytes, records, compact, seq: head.seq };
    this.bytes += bytes - head.bytes;
  }

  private async write(seq: number, data: Buffer, records: number, columns?: readonly string[]): Promise<{ file: string; bytes: number; compact: boolean }> {
    const compact = columns !== undefined;
    const file = join(this.dir, name(seq, records, compact));
    const tmp = `${file}.tmp`;
    const header = compact ? Buffer.from(`${JSON.stringify(columns)}\n`) : undefined;
    const handle = await open(tmp, 'w');
    try {
      if (header) await handle.write(header);
      await handle.writeFile(data); // from the current position: after the header
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, file);
    return { file, bytes: data.length + (header?.length ?? 0), compact };
  }

  /**
   * The oldest batch, without removing it: its rows, and their columns for
   * the compact form. A compact file whose first line is not a column list
   * comes back whole, with `unreadable` saying so.
   */
  async peek(): Promise<{ batch: SpooledBatch; data: Buffer; columns?: string[]; unreadable?: string } | null> {
    const batch = this.files[0];
    if (!batch) return null;
    const data = await readFile(batch.file);
    if (!batch.compact) return { batch, data };
    const eol = data.indexOf(0x0a);
    let columns: unknown;
    try {
      columns = JSON.parse(data.subarray(0, eol < 0 ? data.length : eol).toString('utf8'));
    } catch {
      columns = undefined;
    }
    if (!Array.isArray(columns) || columns.length === 0 || !columns.every((c) => typeof c === 'string')) {
      return { batch, data, unreadable: `log spool file ${batch.file} does not start with its column list` };
    }
    return { batch, data: eol < 0 ? Buffer.alloc(0) : data.subarray(eol + 1), columns };
  }

  /** Removes the oldest batch once it is safely in ClickHouse (or in the dead letters). */
  async shift(): Promise<void> {
    const batch = this.files.shift();
    if (!batch) return;
    this.bytes -= batch.bytes;
    await unlink(batch.file);
  }
}
