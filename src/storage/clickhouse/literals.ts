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
    if (Number.isNaN(value.getTime())) throw new TypeError(`query parameter ${name}: invalid date`);
    return quoteString((value.getTime() / 1000).toFixed(3)); // a Unix timestamp: the same instant in any time zone
  }
  if (Array.isArray(value)) return `[${value.map((v) => literal(v, name)).join(', ')}]`;
  throw new TypeError(`query parameter ${name}: unsupported value ${value === null ? 'null' : typeof value}`);
}

/** The SQL with every placeholder replaced by its value, cast to the placeholder's type. */
export function inlineParams(sql: string, params: QueryParams): string {
  return sql.replace(PLACEHOLDER, (_, name: string, type: string) => {
    if (!Object.hasOwn(params, name)) throw new TypeError(`query parameter ${name} has no value`);
    return `CAST(${literal(params[name], name)} AS ${type})`;
  });
}
