/**
 * Batches are NDJSON bytes: one row a line, each line ending in a newline
 * (a spool file's last line may lack it). These helpers cut them by line
 * without decoding them: halves for isolating refused rows, groups of
 * partitions for inserts that ClickHouse takes in one block.
 */

/** How many rows `data` holds (empty lines are none). */
export function countLines(data: Buffer): number {
  let n = 0;
  forEachRow(data, () => n++);
  return n;
}

/** The rows of `data`, one subarray each, with its newline when it has one (no copy). */
export function lines(data: Buffer): Buffer[] {
  const out: Buffer[] = [];
  forEachRow(data, (s, _e, next) => out.push(data.subarray(s, next)));
  return out;
}

/** NDJSON bytes of some rows, each ending in a newline. */
export function joinLines(rows: readonly Buffer[]): Buffer {
  const parts: Buffer[] = [];
  for (const r of rows) {
    parts.push(r);
    if (r[r.length - 1] !== 0x0a) parts.push(NEWLINE);
  }
  return Buffer.concat(parts);
}
const NEWLINE = Buffer.from('\n');

/** Reads the partition of the row `data[start, end)` (no newline); -1 when it cannot tell. */
export type PartitionOf = (data: Buffer, start: number, end: number) => number;

/**
 * `data` cut into groups of rows spanning at most `max` partitions each (so
 * that each is one insert ClickHouse takes), with their row counts. The usual
 * batch spans one or two days and comes back whole, uncopied.
 */
export function splitByPartition(data: Buffer, partitionOf: PartitionOf, max: number): Array<{ data: Buffer; records: number }> {
  // A first pass only reads and counts: most batches hold one or two partitions and need nothing more.
  const partitions = new Set<number>();
  let records = 0;
  forEachRow(data, (s, e) => {
    partitions.add(partitionOf(data, s, e));
    records++;
  });
  if (partitions.size <= max) return [{ data, records }];
  const rowsOf = new Map<number, Buffer[]>();
  forEachRow(data, (s, e, next) => {
    const p = partitionOf(data, s, e);
    let rows = rowsOf.get(p);
    if (!rows) rowsOf.set(p, (rows = []));
    rows.push(data.subarray(s, next));
  });
  const groups: Array<{ data: Buffer; records: number }> = [];
  let group: Buffer[] = [];
  let spanned = 0;
  for (const rows of rowsOf.values()) {
    if (spanned === max) {
      groups.push({ data: joinLines(group), records: group.length });
      group = [];
      spanned = 0;
    }
    for (const r of rows) group.push(r);
    spanned++;
  }
  if (group.length > 0) groups.push({ data: joinLines(group), records: group.length });
  return groups;
}

/** Calls `fn` with each non-empty row's start, end (before its newline) and the start of the next line. */
function forEachRow(data: Buffer, fn: (start: number, end: number, next: number) => void): void {
  let at = 0;
  while (at < data.length) {
    const eol = data.indexOf(0x0a, at);
    const end = eol < 0 ? data.length : eol;
    const next = eol < 0 ? data.length : eol + 1;
    if (end > at) fn(at, end, next);
    at = next;
  }
}
