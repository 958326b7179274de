/**
 * The disk spool: batches that could not be written to ClickHouse in time,
 * one file per batch, named by a sequence number so that they replay in the
 * order they were accepted. A file is written under a temporary name and
 * renamed, so a crash never leaves half a batch under a real name.
 */
import { mkdirSync, readdirSync, statSync, unlinkSync } from 'node:fs';
import { open, readFile, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';

export interface SpooledBatch {
  file: string;
  bytes: number;
  records: number;
}

const name = (seq: number, records: number): string => `${String(seq).padStart(12, '0')}-${records}.ndjson`;

export class Spool {
  private readonly files: SpooledBatch[] = [];
  private seq = 0;
  bytes = 0;

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
    for (const f of readdirSync(dir).sort()) {
      const path = join(dir, f);
      if (f.endsWith('.tmp')) {
        unlinkSync(path); // a batch whose write never finished was never acknowledged as spooled
        continue;
      }
      const m = /^(\d+)-(\d+)\.ndjson$/.exec(f);
      if (!m) continue;
      const bytes = statSync(path).size;
      this.files.push({ file: path, bytes, records: Number(m[2]) });
      this.bytes += bytes;
      this.seq = Math.max(this.seq, Number(m[1]));
    }
  }

  get size(): number {
    return this.files.length;
  }

  get records(): number {
    return this.files.reduce((n, f) => n + f.records, 0);
  }

  async append(data: Buffer, records: number): Promise<void> {
    const file = join(this.dir, name(++this.seq, records));
    const tmp = `${file}.tmp`;
    const handle = await open(tmp, 'w');
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, file);
    this.files.push({ file, bytes: data.length, records });
    this.bytes += data.length;
  }

  /** The oldest batch, without removing it. */
  async peek(): Promise<{ batch: SpooledBatch; data: Buffer } | null> {
    const batch = this.files[0];
    if (!batch) return null;
    return { batch, data: await readFile(batch.file) };
  }

  /** Removes the oldest batch once it is safely in ClickHouse. */
  async shift(): Promise<void> {
    const batch = this.files.shift();
    if (!batch) return;
    this.bytes -= batch.bytes;
    await unlink(batch.file);
  }
}

