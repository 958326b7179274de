/**
 * The statistics reads behind each dashboards call, run in process against a
 * seeded store (the same storage functions the analytics actor calls, with
 * the same ranges), so that the rows each reads can be measured
 * at two log counts: the test that a call's cost does not grow with the log
 * count (docs/analytics.md, "Rollups"). Each call gets a range that starts
 * and ends off the minute (`jitter` seconds), as a cold dashboard read would.
 */
import { periodRange, previousRange, readRange, type Period } from '../../actors/analytics/periods.js';
import { queryGroupings, queryPeriodTotals, querySeries, queryStats } from '../../storage/clickhouse/stats.js';
import type { ClickHouse, ClickHouseReader } from '../../storage/clickhouse/client.js';
import type { CountingReader } from '../harness/read-rows.js';

const DAY = 86_400;
const HOUR = 3600;

export interface ReadCall {
  name: string;
  read: (ch: ClickHouseReader) => Promise<unknown>;
}

/** The calls of the dashboards bench, at `nowSec`, for one master; `jitter` (seconds) moves every range. */
export function readCalls(nowSec: number, masterId: number, jitter: number): ReadCall[] {
  const now = nowSec - jitter;
  const nowMs = now * 1000;
  const summary = (p: Period): ReadCall => ({
    name: `summary_${p}_trends`,
    read: (ch) => {
      const prev = previousRange(p, nowMs);
      return queryPeriodTotals(ch, [readRange(periodRange(p, nowMs)), ...(prev ? [readRange(prev)] : [])]);
    },
  });
  const realtime = (master?: number): ReadCall => ({
    name: master === undefined ? 'realtime' : 'realtime_master',
    read: (ch) => {
      const minute = Math.floor(now / 60) * 60;
      return queryPeriodTotals(ch, [{ since: minute - 60, until: now + 1 }, { since: minute - 300, until: minute - 60 }], master === undefined ? undefined : { master_id: master });
    },
  });
  return [
    ...(['today', 'last7d', 'last30d', 'all'] as const).map(summary),
    ...(['requests', 'tokens', 'cost'] as const).flatMap((metric) => [
      { name: `traffic_hour_7d_${metric}`, read: (ch: ClickHouseReader) => querySeries(ch, { range: { since: now - 7 * DAY, until: now }, bucket: 'hour', metric }) },
      { name: `traffic_minute_6h_${metric}`, read: (ch: ClickHouseReader) => querySeries(ch, { range: { since: now - 6 * HOUR, until: now }, bucket: 'minute', metric }) },
    ]),
    { name: 'stats_day_30d', read: (ch) => queryStats(ch, { range: { since: now - 30 * DAY, until: now }, bucket: 'day', quantiles: true }) },
    { name: 'stats_month_1y', read: (ch) => queryStats(ch, { range: { since: now - 365 * DAY, until: now }, bucket: 'month', quantiles: true }) },
    { name: 'stats_model_24h_master', read: (ch) => queryStats(ch, { range: { since: now - DAY, until: now }, filter: { master_id: masterId }, byModel: true, quantiles: true }) },
    {
      name: 'v1_stats_last30d',
      read: (ch) =>
        queryGroupings(ch, { range: readRange(periodRange('last30d', nowMs)), filter: { master_id: masterId }, sets: [{ byModel: true }, { bucket: 'day' }], quantiles: true }),
    },
    realtime(),
    realtime(masterId),
  ];
}

/**
 * Rows each call reads (`read_rows`, as ClickHouse counts them in each query's
 * statistics, the figure system.query_log keeps on a server): deterministic
 * whatever the machine's load.
 */
export async function measureReads(reader: CountingReader, nowSec: number, masterId: number, jitter = 17): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const c of readCalls(nowSec, masterId, jitter)) {
    reader.take();
    await c.read(reader);
    out[c.name] = reader.take().rowsRead;
  }
  return out;
}

/** Rows per rollup (and `logs`) in active parts. */
export async function tableRows(ch: ClickHouse): Promise<Record<string, number>> {
  const rows = await ch.query<{ table: string; n: number }>(
    "SELECT table, sum(rows) AS n FROM system.parts WHERE database = currentDatabase() AND active AND startsWith(table, 'logs') GROUP BY table ORDER BY table",
  );
  return Object.fromEntries(rows.map((r) => [r.table, Number(r.n)]));
}
