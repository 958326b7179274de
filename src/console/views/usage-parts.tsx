/**
 * Pieces the usage views share (the overview, a master's page, a tenant's own usage): the period switch, the
 * chart's metric switch (requests, tokens, cost) and the realtime tiles.
 */
import { setQuery } from '../router';
import { Num, Tile } from '../ui/components';
import { money, pct, roundMoney, short } from '../ui/format';
import { Money, Unpriced } from './money';

/** Buttons for the periods a view offers; the first is the default and stays out of the address. */
export function PeriodSwitch<P extends string>({ periods, current }: { periods: readonly P[]; current: P }) {
  return (
    <div class="toolbar" role="group" aria-label="period">
      {periods.map((p) => (
        <button type="button" key={p} aria-pressed={p === current} onClick={() => setQuery({ period: p === periods[0] ? undefined : p }, { push: true })}>
          {p}
        </button>
      ))}
    </div>
  );
}

/** The period in the address when the view offers it, else the default (the first). */
export const periodOf = <P extends string>(periods: readonly P[], v: string | null): P => ((periods as readonly string[]).includes(v ?? '') ? (v as P) : periods[0]!);

export const metrics = ['requests', 'tokens', 'cost'] as const;
export type Metric = (typeof metrics)[number];
/** The chart's metric in the address (`metric=`), requests by default. */
export const metricOf = (v: string | null): Metric => periodOf(metrics, v);
/** How a metric's values read on a chart: money for cost, short figures otherwise. */
export const metricFormat = (m: Metric): ((v: number) => string) => (m === 'cost' ? money : short);

export function MetricSwitch({ current }: { current: Metric }) {
  return (
    <label>
      Metric{' '}
      <select name="metric" value={current} onChange={(e) => setQuery({ metric: e.currentTarget.value === 'requests' ? undefined : e.currentTarget.value }, { push: true })}>
        {metrics.map((m) => (
          <option key={m} value={m}>
            {m}
          </option>
        ))}
      </select>
    </label>
  );
}

interface Realtime {
  last_minute: { qps: number; requests: number; tokens: number; errors?: number; cost?: number; unpriced?: number };
  last_5_minutes: { requests: number };
  rate_limit?: { limit?: number | null; utilization?: number | null; limited?: boolean };
}

/** The last minute's figures; with a rate limit (a master's), its use and whether it is limiting now. */
export function RealtimeTiles({ r, testId = 'realtime' }: { r: Realtime; testId?: string }) {
  const rl = r.rate_limit;
  return (
    <div class="tiles" data-testid={testId}>
      <Tile
        label="QPS (last minute)"
        value={r.last_minute.qps.toFixed(2)}
        sub={rl ? (rl.limit ? `of ${rl.limit} (${pct(rl.utilization, 0)})${rl.limited ? ' · limiting now' : ''}` : 'no limit') : undefined}
      />
      <Tile label="Requests (last minute)" value={<Num n={r.last_minute.requests} />} />
      <Tile label="Tokens (last minute)" value={<Num n={r.last_minute.tokens} compact />} />
      {r.last_minute.cost !== undefined && <Tile label="Cost (last minute)" value={<Money n={r.last_minute.cost} />} sub={<Unpriced n={r.last_minute.unpriced} />} />}
      {r.last_minute.errors !== undefined && <Tile label="Errors (last minute)" value={<Num n={r.last_minute.errors} />} />}
      <Tile label="Requests (5 minutes)" value={<Num n={r.last_5_minutes.requests} />} />
    </div>
  );
}

/** The chart's window in one figure: the series' totals summed (every model, `other` included). */
export function WindowTotal({ series, metric }: { series: { total: number }[]; metric: Metric }) {
  const total = series.reduce((sum, s) => sum + s.total, 0);
  return (
    <p class="window-total" data-testid="window-total">
      {metric === 'cost' ? 'Cost' : metric === 'tokens' ? 'Tokens' : 'Requests'} in this window: {metric === 'cost' ? <Money n={roundMoney(total)} /> : <Num n={total} />}
    </p>
  );
}
