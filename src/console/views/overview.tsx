/**
 * Overview: the dashboard summary with trends, realtime tiles refreshed every
 * few seconds, the traffic chart (click a point: the logs of that bucket and
 * model) with configuration changes marked, and the error rate over time.
 */
import { useMemo } from 'preact/hooks';
import { api } from '../session';
import { href, navigate, setQuery, useLocation } from '../router';
import { Async, Tile, Num } from '../ui/components';
import { useApi } from '../ui/hooks';
import { ms, pct } from '../ui/format';
import { TimeChart, type Marker } from '../ui/chart';
import { rangeOf, ranges, windowOf, type RangeKey } from './common';
import { useAuditMarkers, MarkerList } from './markers';
import { Freshness, PipelineTiles, usePipeline } from './pipeline';
import { MetricSwitch, PeriodSwitch, RealtimeTiles, WindowTotal, metricFormat, metricOf, periodOf } from './usage-parts';
import { Money, Unpriced } from './money';

const periods = ['today', 'last7d', 'last30d', 'all'] as const;

type Trend = { direction: 'up' | 'down' | 'flat' | 'new'; delta_percent: number | null } | undefined;
const arrow = (t: Trend) =>
  !t ? null : (
    <span class={`trend trend-${t.direction}`} title="against the previous period of the same length">
      {t.direction === 'new' ? 'new' : t.direction === 'up' ? '▲' : t.direction === 'down' ? '▼' : '■'}
      {t.delta_percent !== null && t.direction !== 'new' ? ` ${t.delta_percent.toFixed(1)}%` : ''}
    </span>
  );

export function Overview() {
  const { query } = useLocation();
  const period = periodOf(periods, query.get('period'));
  const range = rangeOf(query.get('range'));
  const metric = metricOf(query.get('metric'));
  const topN = Math.min(20, Math.max(1, Number(query.get('top_n')) || 5));

  const summary = useApi((signal) => api.get('/admin/dashboard/summary', { query: { period, include_trends: true }, signal }), [period]);
  const realtime = useApi((signal) => api.get('/admin/realtime', { signal }), [], 5000);
  const win = useMemo(() => windowOf(range), [range]);
  const chart = useApi(
    (signal) => api.get('/admin/logs/stats/traffic-chart', { query: { since: win.since, until: win.until, granularity: win.granularity, top_n: topN, metric }, signal }),
    [win, topN, metric],
  );
  const errors = useApi(
    // The error-rate chart shows no latency: percentiles=false halves the read.
    (signal) => api.get('/admin/logs/stats', { query: { since: win.since, until: win.until, group_by: win.granularity, percentiles: false }, signal }),
    [win],
  );
  const markers = useAuditMarkers(win.since, win.until);
  const pipeline = usePipeline();

  return (
    <section>
      <h1>Overview</h1>
      <PeriodSwitch periods={periods} current={period} />
      <Async state={summary}>
        {(s) => (
          <div class="tiles" data-testid="summary">
            <Tile label="Requests" value={<Num n={s.requests} compact />} sub={arrow(s.trends?.requests)} />
            <Tile label="Errors" value={<Num n={s.errors} compact />} sub={arrow(s.trends?.errors)} />
            <Tile label="Error rate" value={pct(s.error_rate)} sub={arrow(s.trends?.error_rate)} />
            <Tile label="Tokens" value={<Num n={s.tokens} compact />} sub={arrow(s.trends?.tokens)} />
            <Tile
              label="Cost"
              value={<Money n={s.cost} />}
              sub={
                <>
                  {arrow(s.trends?.cost)} <Unpriced n={s.unpriced} />
                </>
              }
            />
            <Tile label="Avg latency" value={ms(s.avg_latency_ms)} sub={arrow(s.trends?.avg_latency_ms)} />
            <Tile label="Masters" value={<Num n={s.masters} />} />
            <Tile label="Child keys" value={<Num n={s.keys} />} />
            <Tile label="Upstream keys" value={<Num n={s.upstream_keys} />} />
          </div>
        )}
      </Async>
      <h2>Realtime</h2>
      <Async state={realtime}>{(r) => <RealtimeTiles r={r} />}</Async>
      <h2>Log pipeline</h2>
      <PipelineTiles state={pipeline} />
      <h2>Traffic</h2>
      <div class="toolbar">
        <label>
          Window{' '}
          <select value={range} onChange={(e) => setQuery({ range: e.currentTarget.value }, { push: true })}>
            {(Object.keys(ranges) as RangeKey[]).map((k) => (
              <option key={k} value={k}>
                {ranges[k].label}
              </option>
            ))}
          </select>
        </label>
        <MetricSwitch current={metric} />
        <label>
          Top models{' '}
          <input type="number" min={1} max={20} value={topN} onChange={(e) => setQuery({ top_n: e.currentTarget.value }, { push: true })} />
        </label>
        <span class="muted">{win.granularity} buckets · click a point for its logs</span>
      </div>
      <Async state={chart} empty={(c) => (c.series.length === 0 ? 'No traffic in this window.' : false)}>
        {(c) => (
          <>
            <TimeChart
              label="traffic by model"
              range={[win.since, win.until]}
              x={c.x}
              series={c.series}
              markers={markers.data ?? []}
              format={metricFormat(metric)}
              onPoint={(t, name) =>
                navigate(
                  href('/logs', {
                    since: t,
                    until: t + win.step,
                    model: name === 'other' ? undefined : name,
                    series: name === 'other' ? 'other' : undefined,
                  }),
                )
              }
            />
            <WindowTotal series={c.series} metric={metric} />
            <Freshness state={pipeline} />
            <MarkerList markers={markers} />
          </>
        )}
      </Async>
      <h2>Error rate</h2>
      <Async state={errors} empty={(e) => (e.items.length === 0 ? 'No requests in this window.' : false)}>
        {(e) => (
          <>
            <ErrorRate items={e.items} markers={markers.data ?? []} range={[win.since, win.until]} />
            <Freshness state={pipeline} />
          </>
        )}
      </Async>
    </section>
  );
}

function ErrorRate({ items, markers, range }: { items: { start: number | null; error_rate: number; requests: number }[]; markers: Marker[]; range: [number, number] }) {
  const x = useMemo(() => items.map((i) => i.start ?? 0), [items]);
  const series = useMemo(() => [{ name: 'error rate', data: items.map((i) => +(i.error_rate * 100).toFixed(3)) }], [items]);
  return <TimeChart label="error rate over time" x={x} series={series} markers={markers} height={180} range={range} unit="%" />;
}
