/**
 * The fast path of POST /logs: LogRecords read straight from the body's bytes
 * and written out as their JSONCompactEachRow rows, with no string decoding,
 * JSON.parse, validation objects, row arrays or JSON.stringify (together about
 * a third of the ingestion path's JavaScript; docs/performance.md "Eighth
 * session"). It takes one record, a JSON array or NDJSON.
 *
 * It only takes what it can prove valid under logRecordSchema (record.ts) and
 * stores what the general path (parse.ts + toRow) would store. For anything
 * else (a repeated or null field, `createdAt`, a number that is not a plain
 * integer within bounds, a string over its length, a key with escapes, a lone
 * surrogate, invalid UTF-8, nesting deeper than 32, any malformed JSON) `scan`
 * returns false and the request takes the general path, which decides and
 * explains. Unknown fields are skipped, as the general path ignores them.
 *
 * Strings are copied as the client wrote them, escapes included: ClickHouse
 * decodes JSON escapes as JSON.parse does, so the stored text is the same
 * (test/logs/fast-row.test.ts checks rows against the general path, and what
 * ClickHouse stores).
 */
import { isUtf8 } from 'node:buffer';
import { LOG_COLUMNS, logRecordSchema } from './record.js';

const enum Ch {
  Tab = 0x09, Lf = 0x0a, Cr = 0x0d, Space = 0x20, Quote = 0x22, Plus = 0x2b, Comma = 0x2c, Minus = 0x2d, Dot = 0x2e,
  Zero = 0x30, Nine = 0x39, Colon = 0x3a, UpperE = 0x45, OpenBracket = 0x5b, Backslash = 0x5c, CloseBracket = 0x5d,
  LowerE = 0x65, LowerU = 0x75, OpenBrace = 0x7b, CloseBrace = 0x7d,
}

interface Field {
  /** Its position in LOG_COLUMNS: where its value goes in the row. */
  column: number;
  name: Buffer;
  /** Integer fields: the largest value; string fields: -1. */
  max: number;
  /** String fields: the schema's maxLength in code points (Infinity when none). */
  maxLength: number;
}

type Property = { type?: string; minimum?: number; maximum?: number; maxLength?: number; format?: string };
const schema = logRecordSchema as unknown as { properties: Record<string, Property>; required: string[] };
const columnOf = (name: string): number => (LOG_COLUMNS as readonly string[]).indexOf(name);

/** The schema's fields, but `createdAt` (a date-time: the general path parses it). */
const fields: Field[] = Object.entries(schema.properties)
  .filter(([, p]) => p.format === undefined)
  .map(([name, p]) => {
    if (columnOf(name) < 0) throw new Error(`fast-row: ${name} is not a log column`);
    if (p.type === 'integer' && (p.minimum !== 0 || p.maximum === undefined)) throw new Error(`fast-row: ${name} must be 0..maximum`);
    if (p.type !== 'integer' && p.type !== 'string') throw new Error(`fast-row: ${name} has a type this path does not read`);
    return {
      column: columnOf(name),
      name: Buffer.from(name, 'latin1'),
      max: p.type === 'integer' ? p.maximum! : -1,
      maxLength: p.type === 'string' ? (p.maxLength ?? Infinity) : 0,
    };
  });
/** Keys this path cannot store: a record holding one goes the general way. */
const declined = Object.keys(schema.properties)
  .filter((name) => !fields.some((f) => f.name.toString('latin1') === name))
  .map((name) => Buffer.from(name, 'latin1'));

const columns = LOG_COLUMNS.length;
const idColumn = columnOf('id');
const masterColumn = columnOf('master_id');
const statusColumn = columnOf('status_code');
const errorColumn = columnOf('error_message');
const requestBodyColumn = columnOf('request_body');
const createdAtColumn = columnOf('created_at');
const required = schema.required.map(columnOf);
/** What an absent field stores, as toRow writes it: 0 or the empty string. */
const absent: Buffer[] = LOG_COLUMNS.map((name) => {
  const field = fields.find((f) => f.column === columnOf(name));
  return Buffer.from(field && field.max >= 0 ? '0' : '""', 'latin1');
});
const emptyString = Buffer.from('""', 'latin1');

/** Fields by name length, for matching a key without making a string of it. */
const byLength: Field[][] = [];
for (const f of fields) (byLength[f.name.length] ??= []).push(f);

/** Bytes a string holds as they are: printable ASCII but the quote and the backslash. */
const plain = new Uint8Array(256);
for (let c = 0x20; c < 0x80; c++) plain[c] = c === Ch.Quote || c === Ch.Backslash ? 0 : 1;
const escapable = new Uint8Array(256);
for (const c of '"\\/bfnrt') escapable[c.charCodeAt(0)] = 1;
const space = new Uint8Array(256);
for (const c of [Ch.Space, Ch.Lf, Ch.Cr, Ch.Tab]) space[c] = 1;

/** Per record: the object's span, then each column's value span; start -1: absent. */
const stride = 2 + 2 * columns;
const maxDepth = 32;
/** A string scanned: its end (past the closing quote), or -1; its length in code points in `stringLength`. */
let stringLength = 0;
let nonAscii = false;

export class FastRows {
  /** Records of the last scanned body. */
  count = 0;
  /** The body was an array or NDJSON (answered with a count), not one object. */
  batch = false;
  /** How many of them are error records (status >= 400 or an error message): the observers get those parsed. */
  errors = 0;
  private body: Uint8Array = emptyString;
  private spans = new Int32Array(stride * 16);
  private masterIds = new Float64Array(16);
  private errorFlags = new Uint8Array(16);
  private ids = new Float64Array(16);
  private out = Buffer.allocUnsafe(8192);

  /**
   * Reads a whole body: one object, a JSON array of them or (ndjson) one per
   * line. true when every record is valid and within what this path handles;
   * then `rows` writes them.
   */
  scan(body: Uint8Array, ndjson: boolean): boolean {
    this.release();
    this.count = 0;
    this.errors = 0;
    nonAscii = false;
    const n = body.length;
    let i = skipSpace(body, 0, n);
    if (ndjson) {
      this.batch = true;
      // Lines of one object each; blank lines are skipped (as parse.ts does).
      while (i < n) {
        i = this.record(body, i, n);
        if (i < 0) return false;
        while (i < n && body[i] !== Ch.Lf) {
          if (space[body[i]!] !== 1) return false;
          i++;
        }
        i = skipSpace(body, i, n);
      }
    } else if (body[i] === Ch.OpenBracket) {
      this.batch = true;
      i = skipSpace(body, i + 1, n);
      if (body[i] !== Ch.CloseBracket) {
        for (;;) {
          i = this.record(body, i, n);
          if (i < 0) return false;
          i = skipSpace(body, i, n);
          if (body[i] === Ch.Comma) i = skipSpace(body, i + 1, n);
          else if (body[i] === Ch.CloseBracket) break;
          else return false;
        }
      }
      i = skipSpace(body, i + 1, n);
    } else {
      this.batch = false;
      i = this.record(body, i, n);
      if (i < 0) return false;
      i = skipSpace(body, i, n);
    }
    if (i !== n || this.count === 0) return false;
    // Non-ASCII bytes only in strings (anything else was refused): valid UTF-8, or the general path's decoding decides.
    if (nonAscii && !isUtf8(body)) return false;
    this.body = body;
    return true;
  }

  /** Writes the rows, newline-separated, taking an id for each; a view valid until the next scan. */
  rows(ids: { next(): number }, createdAt: Uint8Array, keepRequestBody: boolean): Uint8Array {
    const body = this.body;
    const spans = this.spans;
    const need = body.length + this.count * (createdAt.length + 64 + 2 * columns);
    if (this.out.length < need) this.out = Buffer.allocUnsafe(need * 2);
    const out = this.out;
    let p = 0;
    for (let k = 0; k < this.count; k++) {
      const id = ids.next();
      this.ids[k] = id;
      if (k > 0) out[p++] = Ch.Lf;
      out[p++] = Ch.OpenBracket;
      const base = k * stride + 2;
      for (let column = 0; column < columns; column++) {
        if (column > 0) out[p++] = Ch.Comma;
        const from = spans[base + 2 * column]!;
        if (from >= 0 && (keepRequestBody || column !== requestBodyColumn)) p = copy(body, from, spans[base + 2 * column + 1]!, out, p);
        else if (column === idColumn) p = writeInteger(out, p, id);
        else if (column === createdAtColumn) {
          out[p++] = Ch.Quote;
          p = copy(createdAt, 0, createdAt.length, out, p);
          out[p++] = Ch.Quote;
        } else {
          const value = absent[column]!;
          p = copy(value, 0, value.length, out, p);
        }
      }
      out[p++] = Ch.CloseBracket;
    }
    return out.subarray(0, p);
  }

  masterId(k: number): number {
    return this.masterIds[k]!;
  }

  /** The masters of all records (with repeats). */
  masters(): Float64Array {
    return this.masterIds.subarray(0, this.count);
  }

  isError(k: number): boolean {
    return this.errorFlags[k] === 1;
  }

  /** The id `rows` gave record k. */
  id(k: number): number {
    return this.ids[k]!;
  }

  /** Record k's JSON text, for the observers of error records. */
  text(k: number): string {
    const at = k * stride;
    return Buffer.from(this.body.buffer, this.body.byteOffset, this.body.byteLength).toString('utf8', this.spans[at], this.spans[at + 1]);
  }

  /** Scans one record object at i; returns the index past it, or -1. */
  private record(body: Uint8Array, i: number, n: number): number {
    const k = this.count;
    if (body[i] !== Ch.OpenBrace) return -1;
    this.reserve(k + 1);
    const spans = this.spans;
    const at = k * stride;
    const base = at + 2;
    spans.fill(-1, at, at + stride);
    spans[at] = i;
    let master = 0;
    let error = false;
    i = skipSpace(body, i + 1, n);
    if (body[i] !== Ch.CloseBrace) {
      for (;;) {
        // A key: one of the schema's (no escapes), or an unknown one whose value is skipped.
        if (body[i] !== Ch.Quote) return -1;
        const keyStart = i + 1;
        const keyEnd = scanString(body, i, n);
        if (keyEnd < 0) return -1;
        const field = match(body, keyStart, keyEnd - 1);
        i = skipSpace(body, keyEnd, n);
        if (body[i] !== Ch.Colon) return -1;
        i = skipSpace(body, i + 1, n);
        const valueStart = i;
        if (field === null) return -1;
        if (field === undefined) {
          i = skipValue(body, i, n, 1);
          if (i < 0) return -1;
        } else {
          const slot = base + 2 * field.column;
          if (spans[slot] !== -1) return -1; // a repeated field: JSON.parse keeps the last, the general path decides
          if (field.max >= 0) {
            // A plain integer: 0 or [1-9][0-9]*, no sign, fraction or exponent; at most 16 digits (2^53 has 16).
            let value = 0;
            let c = body[i];
            if (c === Ch.Zero) i++;
            else if (c !== undefined && c > Ch.Zero && c <= Ch.Nine) {
              while (i < n && (c = body[i]!) >= Ch.Zero && c <= Ch.Nine) {
                value = value * 10 + (c - Ch.Zero);
                i++;
              }
              if (i - valueStart > 16) return -1;
            } else return -1;
            c = body[i];
            if ((c !== undefined && c >= Ch.Zero && c <= Ch.Nine) || c === Ch.Dot || c === Ch.LowerE || c === Ch.UpperE) return -1;
            if (value > field.max) return -1;
            if (field.column === masterColumn) master = value;
            else if (field.column === statusColumn && value >= 400) error = true;
          } else {
            if (body[i] !== Ch.Quote) return -1;
            i = scanString(body, i, n);
            if (i < 0 || stringLength > field.maxLength) return -1;
            if (field.column === errorColumn && i - valueStart > 2) error = true;
          }
          spans[slot] = valueStart;
          spans[slot + 1] = i;
        }
        i = skipSpace(body, i, n);
        if (body[i] === Ch.Comma) i = skipSpace(body, i + 1, n);
        else if (body[i] === Ch.CloseBrace) break;
        else return -1;
      }
    }
    for (const column of required) if (spans[base + 2 * column] === -1) return -1;
    spans[at + 1] = i + 1;
    this.masterIds[k] = master;
    this.errorFlags[k] = error ? 1 : 0;
    if (error) this.errors++;
    this.count = k + 1;
    return i + 1;
  }

  /** Gives back what one very large batch grew (a 16 MiB body can hold 100,000s of records). */
  private release(): void {
    if (this.masterIds.length > 4096) {
      this.spans = new Int32Array(stride * 16);
      this.masterIds = new Float64Array(16);
      this.errorFlags = new Uint8Array(16);
      this.ids = new Float64Array(16);
    }
    if (this.out.length > 1024 * 1024) this.out = Buffer.allocUnsafe(8192);
  }

  private reserve(records: number): void {
    if (records <= this.masterIds.length) return;
    const size = Math.max(records, this.masterIds.length * 2);
    const grow = <T extends Int32Array | Float64Array | Uint8Array>(a: T, length: number): T => {
      const b = new (a.constructor as new (n: number) => T)(length);
      b.set(a);
      return b;
    };
    this.spans = grow(this.spans, size * stride);
    this.masterIds = grow(this.masterIds, size);
    this.errorFlags = grow(this.errorFlags, size);
    this.ids = grow(this.ids, size);
  }
}

function skipSpace(b: Uint8Array, i: number, n: number): number {
  while (i < n && space[b[i]!] === 1) i++;
  return i;
}

/** The field a key names; undefined: not one of the schema's (skipped); null: one this path declines (or escaped). */
function match(b: Uint8Array, from: number, to: number): Field | undefined | null {
  for (let k = from; k < to; k++) if (b[k] === Ch.Backslash) return null;
  const candidates = byLength[to - from];
  if (candidates) for (const f of candidates) if (same(f.name, b, from)) return f;
  for (const name of declined) if (name.length === to - from && same(name, b, from)) return null;
  return undefined;
}

function same(name: Buffer, b: Uint8Array, from: number): boolean {
  for (let k = 0; k < name.length; k++) if (name[k] !== b[from + k]) return false;
  return true;
}

/**
 * A JSON string at i (its opening quote): no control characters, escapes
 * well formed, surrogates paired. Returns the index past its closing quote
 * (or -1) and sets `stringLength` (code points, as ajv counts maxLength).
 */
function scanString(b: Uint8Array, i: number, n: number): number {
  i++;
  let length = 0;
  for (;;) {
    const from = i;
    while (i < n && plain[b[i]!] === 1) i++; // the bulk of any string
    length += i - from;
    if (i >= n) return -1;
    const c = b[i]!;
    if (c === Ch.Quote) break;
    if (c < 0x20) return -1;
    if (c === Ch.Backslash) {
      const e = b[i + 1];
      if (e === Ch.LowerU) {
        const unit = hex4(b, i + 2);
        if (unit >= 0xd800 && unit <= 0xdbff) {
          if (b[i + 6] !== Ch.Backslash || b[i + 7] !== Ch.LowerU) return -1;
          const low = hex4(b, i + 8);
          if (low < 0xdc00 || low > 0xdfff) return -1;
          i += 12;
        } else if (unit < 0 || (unit >= 0xdc00 && unit <= 0xdfff)) return -1;
        else i += 6;
      } else if (e !== undefined && escapable[e] === 1) i += 2;
      else return -1;
      length++;
    } else {
      nonAscii = true; // c >= 0x80: UTF-8, checked once for the whole body
      if ((c & 0xc0) !== 0x80) length++; // a code point's first byte
      i++;
    }
  }
  stringLength = length;
  return i + 1;
}

/** Skips any valid JSON value at i (an unknown field's); the index past it, or -1. */
function skipValue(b: Uint8Array, i: number, n: number, depth: number): number {
  const c = b[i];
  if (c === Ch.Quote) return scanString(b, i, n);
  if (c === Ch.OpenBrace || c === Ch.OpenBracket) {
    if (depth > maxDepth) return -1;
    const close = c === Ch.OpenBrace ? Ch.CloseBrace : Ch.CloseBracket;
    i = skipSpace(b, i + 1, n);
    if (b[i] === close) return i + 1;
    for (;;) {
      if (close === Ch.CloseBrace) {
        if (b[i] !== Ch.Quote) return -1;
        i = scanString(b, i, n);
        if (i < 0) return -1;
        i = skipSpace(b, i, n);
        if (b[i] !== Ch.Colon) return -1;
        i = skipSpace(b, i + 1, n);
      }
      i = skipValue(b, i, n, depth + 1);
      if (i < 0) return -1;
      i = skipSpace(b, i, n);
      if (b[i] === Ch.Comma) i = skipSpace(b, i + 1, n);
      else if (b[i] === close) return i + 1;
      else return -1;
    }
  }
  if (c === 0x74) return literal(b, i, 'true');
  if (c === 0x66) return literal(b, i, 'false');
  if (c === 0x6e) return literal(b, i, 'null');
  return skipNumber(b, i, n);
}

function literal(b: Uint8Array, i: number, word: string): number {
  for (let k = 0; k < word.length; k++) if (b[i + k] !== word.charCodeAt(k)) return -1;
  return i + word.length;
}

/** -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
function skipNumber(b: Uint8Array, i: number, n: number): number {
  if (b[i] === Ch.Minus) i++;
  if (b[i] === Ch.Zero) i++;
  else if (isDigit(b[i])) while (i < n && isDigit(b[i])) i++;
  else return -1;
  if (b[i] === Ch.Dot) {
    i++;
    if (!isDigit(b[i])) return -1;
    while (i < n && isDigit(b[i])) i++;
  }
  if (b[i] === Ch.LowerE || b[i] === Ch.UpperE) {
    i++;
    if (b[i] === Ch.Plus || b[i] === Ch.Minus) i++;
    if (!isDigit(b[i])) return -1;
    while (i < n && isDigit(b[i])) i++;
  }
  return i;
}

const isDigit = (c: number | undefined): boolean => c !== undefined && c >= Ch.Zero && c <= Ch.Nine;

function hexValue(c: number | undefined): number {
  if (c === undefined) return -1;
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  return -1;
}

function hex4(b: Uint8Array, i: number): number {
  const a = hexValue(b[i]), c = hexValue(b[i + 1]), d = hexValue(b[i + 2]), e = hexValue(b[i + 3]);
  return a < 0 || c < 0 || d < 0 || e < 0 ? -1 : (a << 12) | (c << 8) | (d << 4) | e;
}

/** Short spans byte by byte (no call into the runtime), long ones with one copy. */
function copy(src: Uint8Array, from: number, to: number, out: Uint8Array, p: number): number {
  if (to - from > 32) {
    out.set(src.subarray(from, to), p);
    return p + (to - from);
  }
  for (let k = from; k < to; k++) out[p++] = src[k]!;
  return p;
}

/** A non-negative integer below 2^53, in decimal. */
function writeInteger(out: Uint8Array, p: number, value: number): number {
  let digits = 1;
  for (let v = value; v >= 10; v = Math.floor(v / 10)) digits++;
  let v = value;
  for (let k = p + digits - 1; k >= p; k--) {
    out[k] = Ch.Zero + (v % 10);
    v = Math.floor(v / 10);
  }
  return p + digits;
}
