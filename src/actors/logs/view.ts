/**
 * A stored log record as the API shows it: the row's columns, with the
 * times in RFC 3339 as createdAt/updatedAt and the always-empty deletedAt
 * the original API carried. Its fields come from the table's one description
 * (storage/clickhouse/logs-table.ts), so the route's schema follows the table.
 */
import { LOG_COLUMN_KINDS, type LogRow } from '../../storage/clickhouse/logs-table.js';

/** ClickHouse's DateTime64 text in UTC as RFC 3339. */
export const rfc3339 = (chText: string): string => `${chText.replace(' ', 'T')}Z`;

export function logView(r: LogRow): Record<string, unknown> {
  const { created_text, updated_text, ...rest } = r;
  return { ...rest, createdAt: rfc3339(created_text), updatedAt: rfc3339(updated_text), deletedAt: { time: null, valid: false } };
}

/** The view's fields but deletedAt, each a JSON type: the route's response schema is built from them. */
export const logViewFields: Record<string, 'integer' | 'number' | 'string'> = Object.fromEntries(
  Object.entries(LOG_COLUMN_KINDS).map(([column, kind]) => {
    if (kind === 'time') return [column === 'created_at' ? 'createdAt' : 'updatedAt', 'string'];
    return [column, kind];
  }),
);
