/** Time windows the charts offer and how they map to the API's granularities. */
import { nowSec } from '../ui/format';

export const ranges = {
  '1h': { seconds: 3600, granularity: 'minute' as const, label: 'last hour' },
  '6h': { seconds: 6 * 3600, granularity: 'minute' as const, label: 'last 6 hours' },
  '24h': { seconds: 24 * 3600, granularity: 'hour' as const, label: 'last 24 hours' },
  '7d': { seconds: 7 * 86400, granularity: 'hour' as const, label: 'last 7 days' },
  '30d': { seconds: 30 * 86400, granularity: 'hour' as const, label: 'last 30 days' },
};
export type RangeKey = keyof typeof ranges;

export const rangeOf = (v: string | null): RangeKey => (v && v in ranges ? (v as RangeKey) : '24h');

/** A window ending now, aligned to its granularity so repeated loads ask the same buckets. */
export function windowOf(key: RangeKey): { since: number; until: number; step: number; granularity: 'minute' | 'hour' } {
  const r = ranges[key];
  const step = r.granularity === 'minute' ? 60 : 3600;
  const until = Math.ceil((nowSec() + 1) / step) * step;
  return { since: until - r.seconds, until, step, granularity: r.granularity };
}
