/**
 * `{name:Type}` placeholders rendered as typed SQL literals, for the embedded
 * engine only: chDB runs every bound query of the process one at a time (its
 * parameter state is not per connection), while queries without parameters run
 * in parallel on several connections. Each value becomes `CAST(<literal> AS
 * Type)`, which ClickHouse parses exactly as it parses a bound parameter of that
 * type. Strings are quoted with every character that could end the literal
 * escaped; the type comes from our own SQL text, never from input.
 */
import type { QueryParams } from './client.js';

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*):([^{}]+)\}/g;

/** Backslash first: it is the escape introducer, then the quote that ends the literal, then control characters. */
const ESCAPES: Record<string, string> = {
  '\\': '\\\\',
  "'": "\\'",
  '\0': '\\0',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};
const NEEDS_ESCAPE = /[\\'\0\b\f\n\r\t]/g;

export function quoteString(s: string): string {
  return `'${s.replace(NEEDS_ESCAPE, (c) => ESCAPES[c]!)}'`;
}

/** A JS value as a ClickHouse literal; throws on values a bound parameter could not carry either. */
export function literal(value: unknown, name: string): string {
  if (typeof value === 'string') return quoteString(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`query parameter ${name}: not a finite number`);
    return String(value);
  }
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (value instanceof Date) {
    return quoteString(unixText(value, name));
  }
  if (Array.isArray(value)) return `[${value.map((v) => literal(v, name)).join(', ')}]`;
  throw new TypeError(`query parameter ${name}: unsupported value ${value === null ? 'null' : typeof value}`);
}

/**
 * A Date as Unix seconds with milliseconds, the same instant in any time zone.
 * Ten integer digits and no fraction for whole seconds, as @clickhouse/client
 * sends a bound Date: ClickHouse reads a shorter number (`0.000`) as a broken
 * date, not as a timestamp, and a DateTime takes no fraction.
 * Instants before 1970 have no such form; the routes' schemas keep query
 * times within 1970-2099 (src/contract/value-rules.ts), so this refusal is a bug.
 */
function unixText(value: Date, name: string): string {
  const ms = value.getTime();
  if (Number.isNaN(ms)) throw new TypeError(`query parameter ${name}: invalid date`);
  if (ms < 0) throw new RangeError(`query parameter ${name}: ${value.toISOString()} is before 1970`);
  const seconds = String(Math.floor(ms / 1000)).padStart(10, '0');
  return ms % 1000 === 0 ? seconds : `${seconds}.${String(ms % 1000).padStart(3, '0')}`; // DateTime takes no fraction
}

/** The SQL with every placeholder replaced by its value, cast to the placeholder's type. */
export function inlineParams(sql: string, params: QueryParams): string {
  return sql.replace(PLACEHOLDER, (_, name: string, type: string) => {
    if (!Object.hasOwn(params, name)) throw new TypeError(`query parameter ${name} has no value`);
    return `CAST(${literal(params[name], name)} AS ${type})`;
  });
}
