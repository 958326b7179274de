/**
 * The traffic chart's series from per-model values: every bucket of the range
 * on the x axis, the `topN` models by total, and `other` for the rest, summed
 * exactly. Counts (requests, tokens) are summed as numbers (exact below 2^53),
 * cost as bigint 10^-12 units: parsing every cell of a week of hours × 40
 * models into bigint cost ~1.5 ms a request, more than the cached read itself.
 */
import { moneyNumber, parseMoney } from '../../storage/clickhouse/decimal.js';
import type { ModelSeries } from '../../storage/clickhouse/stats.js';

/** Exact sums of one metric's values, read from ClickHouse's decimal text and sent as JSON numbers. */
interface Sums<T> {
  parse: (text: string) => T;
  zero: T;
  add: (a: T, b: T) => T;
  /** Larger first. */
  desc: (a: T, b: T) => number;
  out: (v: T) => number;
}

const COUNTS: Sums<number> = { parse: Number, zero: 0, add: (a, b) => a + b, desc: (a, b) => b - a, out: (v) => v };
const MONEY: Sums<bigint> = {
  parse: parseMoney,
  zero: 0n,
  add: (a, b) => a + b,
  desc: (a, b) => (b > a ? 1 : b < a ? -1 : 0),
  out: moneyNumber,
};

export interface ChartSeries {
  name: string;
  total: number;
  data: number[];
}

function seriesOf<T>(models: ModelSeries[], x: number[], topN: number, s: Sums<T>): ChartSeries[] {
  const index = new Map(x.map((t, i) => [t, i]));
  const byModel = models.map((m) => {
    const data = new Array<T>(x.length).fill(s.zero);
    m.starts.forEach((start, i) => {
      const at = index.get(start)!;
      data[at] = s.add(data[at]!, s.parse(m.values[i]!));
    });
    return { name: m.model, total: s.parse(m.total), data };
  });
  byModel.sort((a, b) => s.desc(a.total, b.total) || (a.name < b.name ? -1 : 1));
  const top = byModel.slice(0, topN);
  const rest = byModel.slice(topN);
  if (rest.length) {
    const other = { name: 'other', total: s.zero, data: new Array<T>(x.length).fill(s.zero) };
    for (const r of rest) {
      other.total = s.add(other.total, r.total);
      r.data.forEach((v, i) => (other.data[i] = s.add(other.data[i]!, v)));
    }
    top.push(other);
  }
  return top.map((r) => ({ name: r.name, total: s.out(r.total), data: r.data.map(s.out) }));
}

/** The chart's series for a metric: cost exact in bigint units, counts in numbers. */
export const chartSeries = (models: ModelSeries[], x: number[], topN: number, metric: 'requests' | 'tokens' | 'cost'): ChartSeries[] =>
  metric === 'cost' ? seriesOf(models, x, topN, MONEY) : seriesOf(models, x, topN, COUNTS);
