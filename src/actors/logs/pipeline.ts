/**
 * The log pipeline as an operator sees it: a status for GET
 * /admin/logs/pipeline (and the console), /health and /metrics, and the
 * dead letters as GET /admin/logs/dead-letters lists them. The pipeline is
 * degraded while inserts fail (an outage being retried) and while dead
 * letters wait for an operator.
 */
import type { TableWriter } from '../../storage/clickhouse/write/writer.js';
import type { DeadLetter, DeadLetterStore } from '../../storage/clickhouse/write/dead-letters.js';
import { lines } from '../../storage/clickhouse/write/lines.js';

export interface PipelineStatus {
  status: 'ok' | 'degraded';
  /** Records accepted and stored by this node since it started. */
  accepted: number;
  stored: number;
  /** Records waiting in memory and in the disk spool. */
  pending: number;
  /** Records in the dead letters now (kept across restarts). */
  dead_lettered: number;
  last_error: { code: number | string | null; message: string; at: string } | null;
  /** RFC 3339 creation time of the newest stored record; null when none (or ClickHouse does not answer). */
  newest_stored_at: string | null;
}

export function pipelineStatus(writer: TableWriter, newestStoredAt: string | null): PipelineStatus {
  const { accepted, stored, lastError } = writer.stats;
  return {
    status: writer.degraded ? 'degraded' : 'ok',
    accepted,
    stored,
    pending: writer.backlogState.pendingRecords,
    dead_lettered: writer.deadLetters.records,
    last_error: lastError,
    newest_stored_at: newestStoredAt,
  };
}

/** Rows shown of each dead letter, and characters of each row: enough to see what was refused. */
const SAMPLE_ROWS = 3;
const SAMPLE_CHARS = 2048;

export async function deadLetterView(store: DeadLetterStore, l: DeadLetter): Promise<Record<string, unknown> & { records: number }> {
  let sample: string[] = [];
  try {
    sample = lines(await store.rows(l.id))
      .slice(0, SAMPLE_ROWS)
      .map((r) => r.toString('utf8').replace(/\n$/, '').slice(0, SAMPLE_CHARS));
  } catch {
    sample = []; // removed meanwhile
  }
  return { id: l.id, table: l.table, records: l.records, code: l.code, message: l.message, at: l.at, bytes: l.bytes, sample };
}
