/**
 * One batch into ClickHouse, with its refused rows isolated: the batch is
 * inserted whole; should ClickHouse refuse it (a data error, errors.ts), it is
 * cut in halves and each half inserted in turn, down to single rows, so that
 * every row ClickHouse takes is stored and every row it refuses is set apart
 * with its error. An outage stops the work where it is and says what is left
 * (the pieces not yet stored), so that a retry never inserts a row twice.
 */
import { classifyInsertError, type InsertError } from './errors.js';
import { countLines, lines } from './lines.js';

export interface Refused {
  rows: Buffer[];
  error: InsertError;
}

export interface Delivery {
  /** Rows stored. */
  stored: number;
  /** Refused rows, grouped by error code, in the order they were found. */
  refused: Refused[];
  /** Inserts refused on the way (one per refused piece, halves included). */
  refusals: number;
  /** Set when an outage stopped the work: its error, and the pieces still to store, in order. */
  outage: { error: InsertError; left: Buffer[] } | null;
}

/**
 * Inserts `pieces` (NDJSON, in order) until all are stored or refused, or an
 * outage stops it. `insert` takes a piece's bytes; a piece's rows are its lines.
 * `records`, when known, is the row count of a single piece (saves counting
 * them when it goes in whole, the usual case).
 */
export async function insertIsolating(insert: (rows: Buffer) => Promise<void>, pieces: Buffer[], records?: number): Promise<Delivery> {
  const out: Delivery = { stored: 0, refused: [], refusals: 0, outage: null };
  const queue = [...pieces];
  const whole = pieces.length === 1 && records !== undefined ? pieces[0] : undefined;
  while (queue.length > 0) {
    const piece = queue[0]!;
    try {
      await insert(piece);
      out.stored += piece === whole ? records! : countLines(piece);
      queue.shift();
      continue;
    } catch (err) {
      const error = classifyInsertError(err);
      if (error.kind === 'outage') {
        out.outage = { error, left: queue };
        return out;
      }
      out.refusals++;
      const rows = lines(piece);
      if (rows.length <= 1) {
        queue.shift();
        const group = out.refused.find((r) => r.error.code === error.code);
        if (group) group.rows.push(...rows);
        else if (rows.length > 0) out.refused.push({ rows, error });
        continue;
      }
      // The rows are consecutive in the piece: its halves are two views of it.
      const cut = rows[Math.ceil(rows.length / 2)]!.byteOffset - piece.byteOffset;
      queue.splice(0, 1, piece.subarray(0, cut), piece.subarray(cut));
    }
  }
  return out;
}
