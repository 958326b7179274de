/**
 * The dead-letter store: rows ClickHouse refused (isolated from their batch),
 * kept as files under one directory so that nothing accepted is lost and an
 * operator can read, fix and replay them. One file per refused group (the
 * refused rows of one batch with one error code): `<id>.ndjson`, whose first
 * line is a JSON header (table, columns, records, code, message, time) and
 * the rest the rows exactly as they were sent. Written to a temporary name,
 * fsynced and renamed, like the spool. The headers are held in memory.
 */
import { mkdirSync, readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { open, readFile, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { countLines } from './lines.js';

export interface DeadLetter {
  id: string;
  table: string;
  /** The columns of JSONCompactEachRow rows; absent for JSONEachRow objects. */
  columns?: string[];
  records: number;
  code: number | string | null;
  message: string;
  /** When the rows were refused (last refused, after a replay), RFC 3339. */
  at: string;
  bytes: number;
}

const ID = /^\d{13}-\d{6}$/;
const fileOf = (dir: string, id: string): string => join(dir, `${id}.ndjson`);

export class DeadLetterStore {
  readonly #letters = new Map<string, DeadLetter>();
  #seq = 0;

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
    for (const f of readdirSync(dir).sort()) {
      const path = join(dir, f);
      if (f.endsWith('.tmp')) {
        unlinkSync(path); // never acknowledged: its rows are still in the spool
        continue;
      }
      const id = f.replace(/\.ndjson$/, '');
      if (!ID.test(id)) continue;
      const data = readFileSync(path);
      const header = parseHeader(data);
      this.#letters.set(id, { ...header, id, records: countLines(bodyOf(data)), bytes: data.length });
    }
  }

  /** Every dead letter, oldest first. */
  list(): DeadLetter[] {
    return [...this.#letters.values()];
  }

  get(id: string): DeadLetter | undefined {
    return this.#letters.get(id);
  }

  get records(): number {
    let n = 0;
    for (const l of this.#letters.values()) n += l.records;
    return n;
  }

  get size(): number {
    return this.#letters.size;
  }

  /** Keeps refused rows; resolves once they are on disk. */
  async add(letter: Omit<DeadLetter, 'id' | 'bytes'>, rows: Buffer): Promise<DeadLetter> {
    const id = `${Date.now()}-${String(++this.#seq % 1e6).padStart(6, '0')}`;
    return this.#write(id, letter, rows);
  }

  /** The rows of a dead letter, as sent. */
  async rows(id: string): Promise<Buffer> {
    return bodyOf(await readFile(fileOf(this.dir, id)));
  }

  /** Every row the dead letters hold (as latin1 text, a line without its newline): to set nothing apart twice. */
  async heldRows(): Promise<Set<string>> {
    const held = new Set<string>();
    for (const id of this.#letters.keys()) {
      for (const line of (await this.rows(id)).toString('latin1').split('\n')) if (line) held.add(line);
    }
    return held;
  }

  /** Rewrites a dead letter with the rows still refused after a replay (same id). */
  async replace(id: string, letter: Omit<DeadLetter, 'id' | 'bytes'>, rows: Buffer): Promise<DeadLetter> {
    return this.#write(id, letter, rows);
  }

  async remove(id: string): Promise<boolean> {
    if (!this.#letters.has(id)) return false;
    await unlink(fileOf(this.dir, id));
    this.#letters.delete(id);
    return true;
  }

  async #write(id: string, letter: Omit<DeadLetter, 'id' | 'bytes'>, rows: Buffer): Promise<DeadLetter> {
    const file = fileOf(this.dir, id);
    const tmp = `${file}.tmp`;
    const { table, columns, records, code, message, at } = letter;
    const header = Buffer.from(`${JSON.stringify({ table, columns, records, code, message, at })}\n`);
    const handle = await open(tmp, 'w');
    try {
      await handle.write(header);
      await handle.writeFile(rows);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, file);
    const stored: DeadLetter = { table, ...(columns ? { columns } : {}), records, code, message, at, id, bytes: header.length + rows.length };
    this.#letters.set(id, stored);
    return stored;
  }
}

function bodyOf(data: Buffer): Buffer {
  const eol = data.indexOf(0x0a);
  return eol < 0 ? Buffer.alloc(0) : data.subarray(eol + 1);
}

/** The header line; a file whose header cannot be read still lists, with what is known. */
function parseHeader(data: Buffer): Omit<DeadLetter, 'id' | 'records' | 'bytes'> {
  const eol = data.indexOf(0x0a);
  try {
    const h = JSON.parse(data.subarray(0, eol < 0 ? data.length : eol).toString('utf8')) as Partial<DeadLetter>;
    return {
      table: typeof h.table === 'string' ? h.table : 'logs',
      ...(Array.isArray(h.columns) ? { columns: h.columns.map(String) } : {}),
      code: typeof h.code === 'number' || typeof h.code === 'string' ? h.code : null,
      message: typeof h.message === 'string' ? h.message : '',
      at: typeof h.at === 'string' ? h.at : new Date(0).toISOString(),
    };
  } catch {
    return { table: 'logs', code: null, message: 'unreadable dead-letter header', at: new Date(0).toISOString() };
  }
}
