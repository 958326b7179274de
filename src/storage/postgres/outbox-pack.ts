/**
 * How outbox rows hold their store operations. A run of single-field HSETs of
 * the same field (a stats flush mirrors `quota_used` of up to 1,000 keys per
 * entry) is stored as one item: the keys' common prefix, their suffixes and
 * the values in two arrays. That is ~55% of the bytes and a fifth of the JSON
 * values the database parses, stores and gives back (docs/performance.md,
 * "stats-flush"). Everything else is stored as it is, and rows written before
 * packing existed read back unchanged.
 */
import type { StoreOp } from '../redis/store.js';

/** A packed run: `hset prefix+keys[i] field values[i]` for each i, in order. */
export interface HsetRun {
  op: 'hset-run';
  field: string;
  prefix: string;
  keys: string[];
  values: string[];
}

export type PackedOp = StoreOp | HsetRun;

/** Shorter runs gain nothing from packing. */
const MIN_RUN = 4;

/** The single field of an HSET that sets exactly one, else null. */
function soleField(op: StoreOp): string | null {
  if (op.op !== 'hset') return null;
  let only: string | null = null;
  for (const f in op.fields) {
    if (only !== null) return null;
    only = f;
  }
  return only;
}

function commonPrefix(a: string, b: string): string {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i === a.length ? a : a.slice(0, i);
}

export function packOps(ops: StoreOp[]): PackedOp[] {
  const out: PackedOp[] = [];
  for (let i = 0; i < ops.length; ) {
    const field = soleField(ops[i]!);
    let end = i + 1;
    if (field !== null) while (end < ops.length && soleField(ops[end]!) === field) end++;
    if (field === null || end - i < MIN_RUN) {
      for (; i < end; i++) out.push(ops[i]!);
      continue;
    }
    const run = ops.slice(i, end) as Array<Extract<StoreOp, { op: 'hset' }>>;
    let prefix = run[0]!.key;
    for (const op of run) prefix = commonPrefix(prefix, op.key);
    out.push({
      op: 'hset-run',
      field,
      prefix,
      keys: run.map((op) => op.key.slice(prefix.length)),
      values: run.map((op) => op.fields[field]!),
    });
    i = end;
  }
  return out;
}

export function unpackOps(packed: PackedOp[]): StoreOp[] {
  const out: StoreOp[] = [];
  for (const item of packed) {
    if (item.op !== 'hset-run') {
      out.push(item);
      continue;
    }
    const { field, prefix, keys, values } = item;
    for (let i = 0; i < keys.length; i++) out.push({ op: 'hset', key: prefix + keys[i], fields: { [field]: values[i]! } });
  }
  return out;
}
