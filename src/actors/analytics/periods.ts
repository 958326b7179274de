/** Named periods (dashboard, tenant stats) as UTC time ranges, and the period before each. */
import type { TimeRange } from '../../storage/clickhouse/stats.js';

export type Period = 'today' | 'last7d' | 'last30d' | 'all';

const DAY = 86_400;

/**
 * The range of a period ending now (Unix seconds). `today` starts at UTC
 * midnight; `last7d`/`last30d` are rolling windows; `all` starts at the epoch.
 */
export function periodRange(period: Period, nowMs: number): TimeRange {
  const now = Math.floor(nowMs / 1000);
  switch (period) {
    case 'today':
      return { since: Math.floor(now / DAY) * DAY, until: now };
    case 'last7d':
      return { since: now - 7 * DAY, until: now };
    case 'last30d':
      return { since: now - 30 * DAY, until: now };
    case 'all':
      return { since: 0, until: now };
  }
}

/**
 * The range read for a period: through the second `until` (the current second
 * so far, records included), i.e. [since, until + 1) in the exact ranges of
 * the statistics.
 */
export const readRange = (r: TimeRange): TimeRange => ({ since: r.since, until: r.until + 1 });

/**
 * The previous period of equal length: the same range one period earlier
 * (`today` so far against yesterday up to the same time of day). `all` has none.
 */
export function previousRange(period: Period, nowMs: number): TimeRange | null {
  const shift = { today: DAY, last7d: 7 * DAY, last30d: 30 * DAY, all: 0 }[period];
  if (!shift) return null;
  const r = periodRange(period, nowMs);
  return { since: r.since - shift, until: r.until - shift };
}
