/** How numbers and times read: grouped digits, short forms for large figures, local time with UTC on hover. */
const grouped = new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 });
const compact = new Intl.NumberFormat(undefined, { notation: 'compact', maximumFractionDigits: 1 });

export const num = (n: number | null | undefined): string => (n === null || n === undefined || Number.isNaN(n) ? '–' : grouped.format(n));
/** 12.3M for large figures, the exact value stays in the title. */
export const short = (n: number | null | undefined): string =>
  n === null || n === undefined ? '–' : Math.abs(n) >= 100_000 ? compact.format(n) : grouped.format(n);
export const pct = (ratio: number | null | undefined, digits = 2): string =>
  ratio === null || ratio === undefined ? '–' : `${(ratio * 100).toFixed(digits)}%`;
export const ms = (n: number | null | undefined): string => (n === null || n === undefined ? '–' : `${grouped.format(Math.round(n))} ms`);

const localFmt = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

export function toDate(t: string | number | null | undefined): Date | null {
  if (t === null || t === undefined || t === '') return null;
  const d = typeof t === 'number' ? new Date(t < 1e11 ? t * 1000 : t) : new Date(t);
  return Number.isNaN(d.getTime()) ? null : d;
}
export const localTime = (t: string | number | null | undefined): string => {
  const d = toDate(t);
  return d ? localFmt.format(d) : '–';
};
export const utcTime = (t: string | number | null | undefined): string => {
  const d = toDate(t);
  return d ? d.toISOString().replace('.000Z', 'Z') + ' (UTC)' : '';
};

/** Value for an <input type="datetime-local"> from Unix seconds, and back. */
export const toLocalInput = (sec: number | undefined): string => {
  if (!sec) return '';
  const d = new Date(sec * 1000);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
};
export const fromLocalInput = (v: string): number | undefined => (v ? Math.floor(new Date(v).getTime() / 1000) : undefined);

export const nowSec = (): number => Math.floor(Date.now() / 1000);

/**
 * Money in the service's one currency unit (no symbol: the unit is whatever the operator decided). Small amounts
 * keep 4 significant digits (0.0001234), amounts of 1 and more are grouped with 2 decimals (12,345.68);
 * `moneyExact` is the whole figure the API sent (12 decimals at most) for the title.
 */
const moneyLarge = new Intl.NumberFormat(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const moneySmall = new Intl.NumberFormat(undefined, { maximumSignificantDigits: 4 });
export const money = (n: number | null | undefined): string =>
  n === null || n === undefined || Number.isNaN(n) ? '–' : n === 0 ? '0' : Math.abs(n) >= 1 ? moneyLarge.format(n) : moneySmall.format(n);
export const moneyExact = (n: number | null | undefined): string =>
  n === null || n === undefined ? '' : Math.abs(n) < 1e-6 && n !== 0 ? n.toFixed(12).replace(/0+$/, '') : String(n);
/** A sum of amounts back at the API's 12 decimals (binary floating point adds noise below them). */
export const roundMoney = (n: number): number => Number(n.toFixed(12));
