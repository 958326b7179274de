/**
 * The value rules every validated input obeys, whatever route it reaches: what
 * the stores behind the routes can hold. They are applied once, when a schema
 * is compiled (`harden`), so a route declares only what is particular to it:
 * - integers: within the safe-integer range unless the schema says narrower
 *   (Postgres bigint and JS numbers both hold it exactly; `1e400` parses to
 *   Infinity, which ajv refuses with `strictNumbers`);
 * - strings: well-formed Unicode (no lone UTF-16 surrogate: not storable as
 *   UTF-8, and ClickHouse's JSON reader refuses it) and, unless the schema is
 *   compiled for ClickHouse only (log records), no NUL (Postgres text and jsonb
 *   refuse it);
 * - free-form values (an object whose properties are not declared): the same
 *   string rules on every key and string inside, and at most `MAX_DEPTH`
 *   levels of nesting;
 * - `format: date-time`: RFC 3339 as the code can read it (see `dateTimeMs`).
 * Docs: docs/architecture.md, "HTTP conventions".
 */
import { _, type Ajv, type FuncKeywordDefinition, type KeywordDefinition } from 'ajv';
import type { JSONSchema } from './validate.js';

/** The smallest and largest integers accepted where a schema gives no bound. */
export const MIN_INTEGER = -Number.MAX_SAFE_INTEGER;
export const MAX_INTEGER = Number.MAX_SAFE_INTEGER;

/** Levels of nesting a free-form value may have (the value itself is level 1). */
export const MAX_DEPTH = 32;

/** The earliest and latest instants a date-time may name: UTC years 0001-9999 (Postgres has no year 0). */
export const MIN_DATE_TIME_MS = -62_135_596_800_000; // 0001-01-01T00:00:00Z
export const MAX_DATE_TIME_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * Log time: what ClickHouse's columns for log records and their rollups hold
 * (DateTime('UTC') ends in 2106), rounded to whole centuries. Query times
 * (`since`, `until`, Unix seconds) and a record's `createdAt` fall in
 * [LOG_TIME_MIN, LOG_TIME_END).
 */
export const LOG_TIME_MIN = '1970-01-01T00:00:00Z';
export const LOG_TIME_END = '2100-01-01T00:00:00Z';
export const LOG_TIME_END_SECONDS = Date.parse(LOG_TIME_END) / 1000;

/** A Unix-seconds query time within log time. */
export const unixTime = (description: string) =>
  ({
    type: 'integer',
    minimum: 0,
    maximum: LOG_TIME_END_SECONDS,
    description: `${description}; 0 to ${LOG_TIME_END_SECONDS} (${LOG_TIME_MIN} to ${LOG_TIME_END})`,
  }) as const;

/** A date-time string within log time (a record's `createdAt`, the `before` of a deletion). */
export const logDateTime = (description?: string) =>
  ({
    type: 'string',
    format: 'date-time',
    formatMinimum: LOG_TIME_MIN,
    formatExclusiveMaximum: LOG_TIME_END,
    ...(description ? { description } : {}),
  }) as const;

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;
const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * The instant an RFC 3339 date-time names, in milliseconds; NaN when it is not
 * one the service accepts: a real calendar date, seconds 00-59 (a leap second
 * `:60` is refused rather than silently moved: send :59), an offset within
 * ±23:59, at most nine fractional digits, and a UTC instant within years
 * 0001-9999 (`0000-01-01T00:00:00+01:00` is in year -1).
 */
export function dateTimeMs(s: string): number {
  const m = DATE_TIME.exec(s);
  if (!m) return NaN;
  const year = +m[1]!;
  const month = +m[2]!;
  const day = +m[3]!;
  if (month < 1 || month > 12 || day < 1) return NaN;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > (month === 2 && leap ? 29 : DAYS[month - 1]!)) return NaN;
  if (+m[4]! > 23 || +m[5]! > 59 || +m[6]! > 59) return NaN;
  if (m[7] !== undefined && (+m[7] > 23 || +m[8]! > 59)) return NaN;
  const ms = Date.parse(s);
  return ms >= MIN_DATE_TIME_MS && ms <= MAX_DATE_TIME_MS ? ms : NaN;
}

/**
 * The format check and formatMinimum and friends (compare(value, limit), once
 * per limit) would parse a log record's `createdAt` three times: the last value
 * parsed and every limit (schema constants) are remembered.
 */
let lastText = '';
let lastMs = NaN;
const limits = new Map<string, number>();
const cachedMs = (s: string): number => (s === lastText ? lastMs : ((lastText = s), (lastMs = dateTimeMs(s))));
const compareDateTimes = (a: string, b: string): number | undefined => {
  const x = cachedMs(a);
  let y = limits.get(b);
  if (y === undefined) limits.set(b, (y = dateTimeMs(b)));
  return Number.isNaN(x) || Number.isNaN(y) ? undefined : x - y;
};

type Walk = (rules: { allowNul: boolean }, value: unknown, parentSchema: unknown, cxt: { instancePath: string }) => boolean;

/** Checks a free-form value without recursion (a 5,000-level value must not exhaust the stack). */
const freeForm: Walk & { errors?: unknown[] } = (rules, value, _parentSchema, cxt) => {
  const stack: [unknown, string, number][] = [[value, '', 1]];
  const fail = (path: string, message: string): boolean => {
    freeForm.errors = [{ keyword: 'freeForm', instancePath: cxt.instancePath + path, message, params: {} }];
    return false;
  };
  while (stack.length > 0) {
    const [v, path, depth] = stack.pop()!;
    if (typeof v === 'string') {
      const bad = textProblem(v, rules.allowNul);
      if (bad) return fail(path, bad);
    } else if (v !== null && typeof v === 'object') {
      if (depth > MAX_DEPTH) return fail(path, `nests deeper than ${MAX_DEPTH} levels`);
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) stack.push([v[i], `${path}/${i}`, depth + 1]);
      } else {
        for (const [k, child] of Object.entries(v)) {
          const bad = textProblem(k, rules.allowNul);
          if (bad) return fail(path, `has a key that ${bad}`); // the key itself would not print
          stack.push([child, `${path}/${k}`, depth + 1]);
        }
      }
    }
  }
  return true;
};

const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();
const NOT_WELL_FORMED = 'must be well-formed Unicode (a lone UTF-16 surrogate is not text)';
const HAS_NUL = 'must not contain NUL (\\u0000)';

function textProblem(s: string, allowNul: boolean): string | null {
  if (!isWellFormed(s)) return NOT_WELL_FORMED;
  if (!allowNul && s.includes('\0')) return HAS_NUL;
  return null;
}

/** Inline checks: one builtin call per string (isWellFormed is O(1) on one-byte strings, the usual case). */
const keywords: (KeywordDefinition | FuncKeywordDefinition)[] = [
  {
    keyword: 'wellFormed',
    type: 'string',
    schemaType: 'boolean',
    error: { message: NOT_WELL_FORMED },
    code: (cxt) => {
      if (cxt.schema === true) cxt.fail(_`!${cxt.data}.isWellFormed()`);
    },
  },
  {
    // Not typed: ajv checks limits only on finite numbers, and a query's `Infinity` is coerced to one after its type check.
    keyword: 'finite',
    schemaType: 'boolean',
    error: { message: 'must be a finite number' },
    code: (cxt) => {
      if (cxt.schema === true) cxt.fail(_`typeof ${cxt.data} == "number" && !isFinite(${cxt.data})`);
    },
  },
  {
    keyword: 'noNul',
    type: 'string',
    schemaType: 'boolean',
    error: { message: HAS_NUL },
    code: (cxt) => {
      if (cxt.schema === true) cxt.fail(_`${cxt.data}.includes("\\u0000")`);
    },
  },
  { keyword: 'freeForm', schemaType: 'object', errors: true, validate: freeForm as FuncKeywordDefinition['validate'] },
];

/** Installs the rules' keywords and the date-time format on an ajv instance. */
export function addValueRules(ajv: Ajv): Ajv {
  for (const k of keywords) ajv.addKeyword(k);
  ajv.addFormat('date-time', { type: 'string', validate: (s: string) => !Number.isNaN(cachedMs(s)), compare: compareDateTimes });
  return ajv;
}

export interface HardenOptions {
  /** NUL may appear in strings (schemas whose values only ClickHouse stores: log records). */
  allowNul?: boolean;
}

const SCHEMA_MAPS = ['properties', 'patternProperties', 'dependentSchemas', '$defs', 'definitions'];
const SCHEMA_LISTS = ['oneOf', 'anyOf', 'allOf', 'prefixItems'];
const SCHEMA_ONES = ['not', 'if', 'then', 'else', 'contains', 'additionalItems', 'unevaluatedProperties', 'unevaluatedItems'];

/** A copy of `schema` with the value rules added to every node they concern; the declaration is left as written. */
export function harden(schema: JSONSchema, opts: HardenOptions = {}): JSONSchema {
  const allowNul = opts.allowNul ?? false;
  const walk = (node: unknown): unknown => {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return node;
    const s = { ...(node as JSONSchema) };
    const types = Array.isArray(s.type) ? (s.type as string[]) : typeof s.type === 'string' ? [s.type] : [];
    if (types.includes('integer') || types.includes('number')) s.finite = true;
    if (types.includes('integer')) {
      if (s.minimum === undefined && s.exclusiveMinimum === undefined) s.minimum = MIN_INTEGER;
      if (s.maximum === undefined && s.exclusiveMaximum === undefined) s.maximum = MAX_INTEGER;
    }
    if (types.includes('string')) {
      s.wellFormed = true;
      if (!allowNul) s.noNul = true;
    }
    const undeclared = s.properties === undefined && s.patternProperties === undefined && s.additionalProperties === undefined;
    if ((types.includes('object') && (s.additionalProperties === true || undeclared)) || (types.includes('array') && s.items === undefined && s.prefixItems === undefined)) {
      s.freeForm = { allowNul };
    }
    if (types.includes('object') && s.additionalProperties && typeof s.additionalProperties === 'object') {
      // Names of undeclared properties are strings too (header names, map keys).
      s.propertyNames = { type: 'string', ...((s.propertyNames as JSONSchema | undefined) ?? {}) };
    }
    for (const k of SCHEMA_MAPS) {
      const m = s[k] as Record<string, unknown> | undefined;
      if (m && typeof m === 'object') s[k] = Object.fromEntries(Object.entries(m).map(([name, v]) => [name, walk(v)]));
    }
    for (const k of SCHEMA_LISTS) if (Array.isArray(s[k])) s[k] = (s[k] as unknown[]).map(walk);
    for (const k of [...SCHEMA_ONES, 'additionalProperties', 'propertyNames']) if (s[k] && typeof s[k] === 'object') s[k] = walk(s[k]);
    if (s.items !== undefined) s.items = Array.isArray(s.items) ? s.items.map(walk) : walk(s.items);
    return s;
  };
  return walk(schema) as JSONSchema;
}
