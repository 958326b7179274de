/** A tenant's own usage (/v1/stats: totals, by model, by day; period switch) and realtime figures (/v1/realtime). */
import { useMemo } from 'preact/hooks';
import { api } from '../session';
import { href, setQuery, useLocation, navigate } from '../router';
import { Async, Num, Table, Tile } from '../ui/components';
import { useApi } from '../ui/hooks';
import { ms, pct } from '../ui/format';
import { TimeChart } from '../ui/chart';

const periods = ['today', 'last7d', 'last30d'] as const;
type Period = (typeof periods)[number];

export function MyUsage() {
  const { query } = useLocation();
  const period = (periods as readonly string[]).includes(query.get('period') ?? '') ? (query.get('period') as Period) : 'today';
  const stats = useApi((signal) => api.get('/v1/stats', { query: { period }, signal }), [period]);
  const realtime = useApi((signal) => api.get('/v1/realtime', { signal }), [], 5000);
  return (
    <section>
      <h1>Usage</h1>
      <h2>Realtime</h2>
      <Async state={realtime}>
        {(r) => (
          <div class="tiles" data-testid="realtime">
            <Tile label="QPS now" value={r.last_minute.qps.toFixed(2)} sub={r.rate_limit.limit ? `of ${r.rate_limit.limit} (${pct(r.rate_limit.utilization, 0)})` : 'no limit'} />
            <Tile label="Requests (last minute)" value={<Num n={r.last_minute.requests} />} />
            <Tile label="Tokens (last minute)" value={<Num n={r.last_minute.tokens} compact />} />
            <Tile label="Requests (5 minutes)" value={<Num n={r.last_5_minutes.requests} />} />
          </div>
        )}
      </Async>
      <div class="toolbar" role="group" aria-label="period">
        {periods.map((p) => (
          <button type="button" key={p} aria-pressed={p === period} onClick={() => setQuery({ period: p === 'today' ? undefined : p }, { push: true })}>
            {p}
          </button>
        ))}
      </div>
      <Async state={stats}>
        {(s) => (
          <>
            <div class="tiles" data-testid="summary">
              <Tile label="Requests" value={<Num n={s.totals.requests} compact />} />
              <Tile label="Errors" value={<Num n={s.totals.errors} compact />} sub={pct(s.totals.error_rate)} />
              <Tile label="Tokens" value={<Num n={s.totals.tokens} compact />} />
              <Tile label="Avg latency" value={ms(s.totals.avg_latency_ms)} />
            </div>
            <h2>By day</h2>
            {s.by_day.length === 0 ? <p class="state empty">No requests in this period.</p> : <ByDay days={s.by_day} />}
            <h2>By model</h2>
            {s.by_model.length === 0 ? (
              <p class="state empty">No requests in this period.</p>
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

function ByDay({ days }: { days: { start: number | null; requests: number; tokens: number }[] }) {
  const x = useMemo(() => days.map((d) => d.start ?? 0), [days]);
  const series = useMemo(() => [{ name: 'requests', data: days.map((d) => d.requests) }, { name: 'tokens', data: days.map((d) => d.tokens) }], [days]);
  return <TimeChart label="usage by day" x={x} series={series} height={200} />;
}
