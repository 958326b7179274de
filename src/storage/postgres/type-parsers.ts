/**
 * Type parsers for the slonik pool. They replace slonik's preset (which turns
 * timestamps into epoch numbers and int8 into BigInt) so that rows serialize
 * straight to JSON: RFC 3339 UTC strings, plain numbers, parsed JSON.
 * Array types (timestamptz[], int8[], ...) reuse these through the pg driver.
 */
import { createIntervalTypeParser, type DriverTypeParser } from 'slonik';

// ISO DateStyle output: `2026-01-02 03:04:05.678901+01:30`, optional ` BC`.
const TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([+-])(\d{2})(?::?(\d{2}))?(?::?(\d{2}))?)?$/;

/**
 * Postgres timestamp text → `YYYY-MM-DDTHH:MM:SS.sssZ` (microseconds truncated).
 * Values RFC 3339 cannot express (infinity, BC, years past 9999) are returned
 * unchanged rather than mangled.
 */
export function toRfc3339(value: string): string {
  const m = TIMESTAMP.exec(value);
  if (!m) return value;
  const [, y, mo, d, h, mi, s, frac, sign, oh, om, os] = m;
  const ms = frac ? Number(frac.slice(0, 3).padEnd(3, '0')) : 0;
  const date = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC maps years 0-99 to 1900-1999.
  date.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  date.setUTCHours(Number(h), Number(mi), Number(s), ms);
  let t = date.getTime();
  if (sign) {
    const offset = (Number(oh) * 3600 + Number(om ?? 0) * 60 + Number(os ?? 0)) * 1000;
    t -= sign === '+' ? offset : -offset;
  }
  return new Date(t).toISOString();
}

export function createTypeParsers(): DriverTypeParser[] {
  const json = (value: string): unknown => JSON.parse(value);
  return [
    // Precision is lost past 2^53; counters and ids here stay far below it.
    { name: 'int8', parse: (value: string) => Number(value) },
    { name: 'numeric', parse: (value: string) => Number.parseFloat(value) },
    { name: 'timestamptz', parse: toRfc3339 },
    // `timestamp` has no zone; the session runs in UTC, so read it as UTC.
    { name: 'timestamp', parse: toRfc3339 },
    // ISO DateStyle already prints `YYYY-MM-DD`; keep it a string (no zone shifts).
    { name: 'date', parse: (value: string) => value },
    { name: 'json', parse: json },
    { name: 'jsonb', parse: json },
    // Interval as seconds, as in slonik's preset.
    createIntervalTypeParser(),
  ];
}
