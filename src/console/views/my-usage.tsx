/**
 * A tenant's own usage (/v1/stats: totals with cost, by model, by day as requests and tokens or as cost;
 * period switch), realtime figures (/v1/realtime) and how fresh they are.
 */
import { useMemo } from 'preact/hooks';
import { api } from '../session';
import { href, useLocation, navigate, setQuery } from '../router';
import { Async, Empty, Num, Table, Tile } from '../ui/components';
import { useApi } from '../ui/hooks';
import { money, ms, pct } from '../ui/format';
import { TimeChart } from '../ui/chart';
import { Freshness, useOwnFreshness } from './pipeline';
import { PeriodSwitch, RealtimeTiles, periodOf } from './usage-parts';
import { Money, Unpriced } from './money';

const periods = ['today', 'last7d', 'last30d'] as const;

export function MyUsage() {
  const { query } = useLocation();
  const period = periodOf(periods, query.get('period'));
  const byDayCost = query.get('metric') === 'cost';
  const stats = useApi((signal) => api.get('/v1/stats', { query: { period }, signal }), [period]);
  const realtime = useApi((signal) => api.get('/v1/realtime', { signal }), [], 5000);
  const fresh = useOwnFreshness();
  return (
    <section>
      <h1>Usage</h1>
      <h2>Realtime</h2>
      <Async state={realtime}>{(r) => <RealtimeTiles r={r} />}</Async>
      <h2>Totals</h2>
      <PeriodSwitch periods={periods} current={period} />
      <Async state={stats}>
        {(s) => (
          <>
            <div class="tiles" data-testid="summary">
              <Tile label="Requests" value={<Num n={s.totals.requests} compact />} />
              <Tile label="Errors" value={<Num n={s.totals.errors} compact />} sub={`${pct(s.totals.error_rate)} of requests`} />
              <Tile label="Tokens" value={<Num n={s.totals.tokens} compact />} />
              <Tile label="Cost" value={<Money n={s.totals.cost} />} sub={<Unpriced n={s.totals.unpriced} />} />
              <Tile label="Avg latency" value={ms(s.totals.avg_latency_ms)} />
            </div>
            <h2>By day</h2>
            <div class="toolbar">
              <label>
                Chart{' '}
                <select name="metric" value={byDayCost ? 'cost' : ''} onChange={(e) => setQuery({ metric: e.currentTarget.value || undefined }, { push: true })}>
                  <option value="">requests and tokens</option>
                  <option value="cost">cost</option>
                </select>
              </label>
            </div>
            {s.by_day.length === 0 ? <Empty>No requests in this period.</Empty> : <ByDay days={s.by_day} range={[s.since, s.until]} cost={byDayCost} />}
            <Freshness state={fresh} />
            <h2>By model</h2>
            {s.by_model.length === 0 ? (
              <Empty>No requests in this period.</Empty>
            ) : (
              <Table
                label="usage by model"
                rows={s.by_model}
                rowKey={(m) => m.key}
                onRow={(m) => navigate(href('/logs', { model: m.key, since: s.since, until: s.until }))}
                columns={[
                  { title: 'Model', cell: (m) => m.key },
                  { title: 'Requests', cell: (m) => <Num n={m.requests} />, class: 'right' },
                  { title: 'Share', cell: (m) => <Bar ratio={s.totals.requests ? m.requests / s.totals.requests : 0} /> },
                  { title: 'Errors', cell: (m) => pct(m.error_rate), class: 'right' },
                  { title: 'Tokens', cell: (m) => <Num n={m.tokens} compact />, class: 'right' },
                  { title: 'Cost', cell: (m) => (m.unpriced > 0 && m.unpriced === m.requests ? <span class="muted">no price</span> : <Money n={m.cost} />), class: 'right' },
                  { title: 'p95 latency', cell: (m) => ms(m.p95_latency_ms), class: 'right' },
                ]}
              />
            )}
          </>
        )}
      </Async>
    </section>
  );
}

const Bar = ({ ratio }: { ratio: number }) => (
  <span class="bar" title={pct(ratio)}>
    <meter min={0} max={1} value={ratio} />
  </span>
);

const DAY = 86400;

/**
 * Requests (left axis) and tokens (right axis) per day, or the day's cost, over the whole period's days even
 * when only some have traffic; each day's point stands at its middle, so that a single day (today) is not drawn
 * against the edge.
 */
function ByDay({ days, range, cost }: { days: { start: number | null; requests: number; tokens: number; cost: number }[]; range: [number, number]; cost: boolean }) {
  const x = useMemo(() => days.map((d) => (d.start ?? 0) + DAY / 2), [days]);
  const series = useMemo(
    () =>
      cost
        ? [{ name: 'cost', data: days.map((d) => d.cost) }]
        : [
            { name: 'requests', data: days.map((d) => d.requests) },
            { name: 'tokens', data: days.map((d) => d.tokens), right: true },
          ],
    [days, cost],
  );
  const whole: [number, number] = [Math.floor(range[0] / DAY) * DAY, Math.ceil(range[1] / DAY) * DAY];
  return <TimeChart label="usage by day" x={x} series={series} height={220} range={whole} format={cost ? money : undefined} />;
}
