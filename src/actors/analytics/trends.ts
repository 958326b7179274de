/**
 * Trend of a dashboard figure against the previous period. Rules, in order:
 * equal values are `flat` (delta 0); for a ratio figure (error rate, latency)
 * a previous value that is zero or missing (no requests then) gives `new` with
 * no delta; a count rising from zero is `up` with no delta (a percentage of
 * zero is undefined); otherwise the sign of the change, delta in percent of
 * the previous value, rounded to 2 decimals.
 */
export type Direction = 'up' | 'down' | 'flat' | 'new';

export interface Trend {
  value: number;
  previous: number | null;
  delta_percent: number | null;
  direction: Direction;
}

export function trend(value: number, previous: number | null, ratio: boolean): Trend {
  if (previous === value) return { value, previous, delta_percent: 0, direction: 'flat' };
  if (previous === null || previous === 0) {
    if (ratio || previous === null) return { value, previous, delta_percent: null, direction: 'new' };
    return { value, previous, delta_percent: null, direction: 'up' };
  }
  const delta = Math.round(((value - previous) / previous) * 10_000) / 100;
  return { value, previous, delta_percent: delta, direction: value > previous ? 'up' : 'down' };
}
