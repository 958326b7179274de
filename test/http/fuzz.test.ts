/**
 * Schema-driven fuzzing of the whole route table: for every route, requests
 * generated from its own declared schemas (path, query, body), then every
 * field in turn given each hostile value (a lone surrogate, NUL, 1e400, 2^63,
 * -1, a leap second, year 0000 with an offset, 5,000-level nesting, since=0
 * and friends). No answer may be a 5xx, and every 4xx carries the error
 * envelope. A new route is fuzzed by being in the table: nothing here names a
 * route. Deterministic (seeded) and bounded (well under a minute). A URL over
 * the limit (the nesting in a query) is sent alone over a plain socket and
 * must be 414, or closed without an answer when its head is over 4096 bytes
 * (src/http/head-limit.ts).
 */
import t from 'tap';
import { adminToken, internalToken, startTestService } from '../helpers/harness.js';
import { allRoutes } from '../../src/http/routes/index.js';
import { harden } from '../../src/contract/value-rules.js';
import type { JSONSchema } from '../../src/contract/validate.js';
import type { Route } from '../../src/http/route.js';
import { MAX_HEAD_BYTES, MAX_TARGET_BYTES, targetBytes } from '../../src/http/head-limit.js';
import { RawConnection, head } from '../helpers/raw-http.js';

const SEED = 20_2611;
const VALID_PER_ROUTE = 3;
const HOSTILE_PER_ROUTE = 16;
const CONCURRENCY = 12;
const REQUEST_TIMEOUT_MS = 20_000;
/** 503s about what this test service lacks by configuration, whatever the input (no model registry URL). */
const CONFIGURATION_503 = /"code":"unavailable","message":"no model registry is configured/;

/** mulberry32: a small seeded generator, so a failure names a reproducible case. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}
const random = rng(SEED);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;

/** JSON text written as is into a body (numbers JSON.stringify cannot spell, deep nesting, escapes). */
class Raw {
  constructor(readonly json: string, readonly text: string) {}
}
const toJson = (v: unknown): string => {
  if (v instanceof Raw) return v.json;
  if (Array.isArray(v)) return `[${v.map(toJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}:${toJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
};
const toText = (v: unknown): string => (v instanceof Raw ? v.text : typeof v === 'string' ? v : toJson(v));

const deep = `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`;
type Kind = 'string' | 'date' | 'number' | 'free' | 'other';
/** Each hostile value as JSON text (bodies) and as query text, with the kinds of field it is aimed at. */
const HOSTILE: [Raw, Kind[]][] = [
  [new Raw('"\\ud800"', '\ud800'), ['string', 'date', 'other']],
  [new Raw('"a\\u0000b"', 'a\u0000b'), ['string', 'date']],
  [new Raw('1e400', '1e400'), ['number', 'other']],
  [new Raw('9223372036854775808', '9223372036854775808'), ['number']],
  [new Raw('1e19', '1e19'), ['number']],
  [new Raw('-1', '-1'), ['number']],
  [new Raw('0', '0'), ['number']], // since=0
  [new Raw('"Infinity"', 'Infinity'), ['number']],
  [new Raw('"2030-06-30T23:59:60Z"', '2030-06-30T23:59:60Z'), ['date', 'string']],
  [new Raw('"0000-01-01T00:00:00+01:00"', '0000-01-01T00:00:00+01:00'), ['date', 'string']],
  [new Raw('"9999-12-31T23:59:59-01:00"', '9999-12-31T23:59:59-01:00'), ['date']],
  [new Raw(deep, deep), ['free', 'other']],
  [new Raw('{"\\ud800":"a\\u0000b","n":[1e308,-1e308,"\\udfff"]}', '{}'), ['free']],
  [new Raw('""', ''), ['string']],
];
/** Path segments: uWS hands the path still encoded, the router decodes it. */
const HOSTILE_PATH: [string, Kind[]][] = [
  ['%ED%A0%80', ['string', 'other']],
  ['a%00b', ['string', 'other']],
  ['1e400', ['number']],
  ['9223372036854775808', ['number']],
  ['1e19', ['number']],
  ['-1', ['number']],
  ['0', ['number']],
  ['Infinity', ['number']],
  ['23%3A59%3A60', ['string']],
];

function kindOf(schema: JSONSchema | undefined): Kind {
  if (!schema) return 'free';
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [String(schema.type)];
  if (schema.format === 'date-time') return 'date';
  if (types.includes('string')) return 'string';
  if (types.includes('integer') || types.includes('number')) return 'number';
  if (types.includes('array') || (types.includes('object') && (!schema.properties || schema.additionalProperties === true))) return 'free';
  return 'other';
}

/** A value the schema accepts (mostly: patterns are matched from a few candidates). */
function generate(schema: JSONSchema | undefined, depth = 0): unknown {
  if (!schema || depth > 6) return 'x';
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return pick(schema.enum);
  for (const k of ['oneOf', 'anyOf'] as const) if (Array.isArray(schema[k])) return generate(pick(schema[k] as JSONSchema[]), depth + 1);
  if (Array.isArray(schema.allOf)) return generate((schema.allOf as JSONSchema[])[0], depth + 1);
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [String(schema.type ?? 'string')];
  const type = types.length > 1 && random() < 0.8 ? types.find((x) => x !== 'null')! : pick(types);
  switch (type) {
    case 'null':
      return null;
    case 'boolean':
      return random() < 0.5;
    case 'integer':
    case 'number': {
      const min = Number(schema.minimum ?? schema.exclusiveMinimum ?? -1e6);
      const max = Number(schema.maximum ?? schema.exclusiveMaximum ?? 1e6);
      const lo = schema.exclusiveMinimum !== undefined ? min + 1 : min;
      const hi = schema.exclusiveMaximum !== undefined ? max - 1 : max;
      const mid = Math.max(lo, Math.min(hi, 1 + Math.floor(random() * 100)));
      const v = pick([lo, hi, mid, mid, Math.floor(lo + random() * (hi - lo))]);
      return type === 'integer' ? Math.round(v) : v;
    }
    case 'string':
      return generateString(schema);
    case 'array': {
      const n = Math.max(Number(schema.minItems ?? 0), Math.min(Number(schema.maxItems ?? 3), Math.floor(random() * 3)));
      const items = Array.from({ length: n }, () => generate(schema.items as JSONSchema | undefined, depth + 1));
      return schema.uniqueItems ? [...new Map(items.map((i) => [JSON.stringify(i), i])).values()] : items;
    }
    case 'object': {
      const props = (schema.properties ?? {}) as Record<string, JSONSchema>;
      const required = new Set((schema.required as string[] | undefined) ?? []);
      const out: Record<string, unknown> = {};
      for (const [k, s] of Object.entries(props)) if (required.has(k) || random() < 0.6) out[k] = generate(s, depth + 1);
      if (Object.keys(props).length === 0 && schema.additionalProperties !== false) {
        out.k = typeof schema.additionalProperties === 'object' ? generate(schema.additionalProperties as JSONSchema, depth + 1) : { nested: [1, 'two'] };
      }
      const minProps = Number(schema.minProperties ?? 0);
      for (const [k, s] of Object.entries(props)) if (Object.keys(out).length < minProps && !(k in out)) out[k] = generate(s, depth + 1);
      return out;
    }
    default:
      return 'x';
  }
}

function generateString(schema: JSONSchema): string {
  if (schema.format === 'date-time') {
    const lo = Date.parse(String(schema.formatMinimum ?? '2000-01-01T00:00:00Z'));
    const hi = Date.parse(String(schema.formatExclusiveMaximum ?? '2099-01-01T00:00:00Z')) - 1000;
    return new Date(pick([lo, hi, Date.now() + 86_400_000, lo + random() * (hi - lo)])).toISOString();
  }
  if (schema.format === 'uri') return 'https://example.invalid/v1';
  const hex = Array.from({ length: 64 }, () => '0123456789abcdef'[Math.floor(random() * 16)]).join('');
  const candidates = ['abc', 'a1', 'ns_1', 'admin', 'master:1', hex, 'https://example.invalid/x', '', 'Zz9'];
  const min = Number(schema.minLength ?? 0);
  const max = Number(schema.maxLength ?? 64);
  const fits = (s: string) => s.length >= min && s.length <= max && (!schema.pattern || new RegExp(String(schema.pattern), 'u').test(s));
  const found = candidates.find(fits);
  if (found !== undefined) return found;
  return 'x'.repeat(Math.max(1, Math.min(max, min)));
}

/** Paths to every field a schema declares (nested objects and the first item of arrays), as key lists. */
type Field = [(string | number)[], JSONSchema | undefined];
function fieldPaths(schema: JSONSchema | undefined, prefix: (string | number)[] = [], depth = 0): Field[] {
  if (!schema || depth > 5) return [];
  const out: Field[] = [];
  for (const k of ['oneOf', 'anyOf'] as const) if (Array.isArray(schema[k])) for (const s of schema[k] as JSONSchema[]) out.push(...fieldPaths(s, prefix, depth + 1));
  const props = schema.properties as Record<string, JSONSchema> | undefined;
  for (const [k, s] of Object.entries(props ?? {})) {
    out.push([[...prefix, k], s]);
    out.push(...fieldPaths(s, [...prefix, k], depth + 1));
  }
  if (schema.items && typeof schema.items === 'object' && !Array.isArray(schema.items)) {
    out.push([[...prefix, 0], schema.items as JSONSchema]);
    out.push(...fieldPaths(schema.items as JSONSchema, [...prefix, 0], depth + 1));
  }
  const seen = new Set<string>();
  return out.filter(([p]) => !seen.has(JSON.stringify(p)) && seen.add(JSON.stringify(p)));
}

/** `base` with the value at `path` replaced (containers created on the way). */
function withValue(base: unknown, path: (string | number)[], value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  const container: any = Array.isArray(base) ? [...base] : base !== null && typeof base === 'object' ? { ...base } : typeof head === 'number' ? [] : {};
  container[head!] = withValue(container[head!], rest, value);
  return container;
}

interface Case {
  route: Route;
  what: string;
  path: string;
  query: string;
  body?: string;
}

const svc = await startTestService({ env: { SVC_AUTH_FAIL_LIMIT: '0' } });
t.teardown(() => svc.stop());

// A tenant for master-role routes.
const created = await svc.request('POST', '/admin/masters', { token: adminToken, body: { name: 'fuzz', group: 'fuzz' } });
const masterKey: string = created.json.master_key;
const headersFor = (route: Route): Record<string, string> => {
  switch (route.role) {
    case 'admin':
    case 'admin_or_internal':
      return { authorization: `Bearer ${adminToken}` };
    case 'internal':
      return { 'x-internal-token': internalToken };
    case 'master':
    case 'identify':
      return { authorization: `Bearer ${masterKey}` };
    default:
      return {};
  }
};

function cases(route: Route): Case[] {
  const params = route.params ? harden(route.params) : undefined;
  const query = route.query ? harden(route.query) : undefined;
  const body = route.body ? harden(route.body) : undefined;
  const fillPath = (p: Record<string, unknown>, override?: [string, string]) =>
    route.path.replace(/\{(\w+)\}/g, (_, name: string) =>
      override && override[0] === name ? override[1] : encodeURIComponent(toText(p[name] ?? 'x')),
    );
  const queryText = (q: Record<string, unknown>) => new URLSearchParams(Object.entries(q).map(([k, v]): [string, string] => [k, toText(v)])).toString();
  const out: Case[] = [];
  const make = (what: string, p: Record<string, unknown>, q: Record<string, unknown>, b: unknown, pathOverride?: [string, string]): Case => ({
    route,
    what,
    path: fillPath(p, pathOverride),
    query: queryText(q),
    ...(body ? { body: toJson(b) } : {}),
  });
  const valid = () => ({
    p: (generate(params) ?? {}) as Record<string, unknown>,
    q: (query ? generate(query) : {}) as Record<string, unknown>,
    b: body ? generate(body) : undefined,
  });
  for (let i = 0; i < VALID_PER_ROUTE; i++) {
    const v = valid();
    out.push(make(`generated #${i}`, v.p, v.q, v.b));
  }
  // Every (field, hostile value) pair aimed at the field's kind, taken round-robin over the fields up to the cap,
  // so that each field gets its first hostile value before any gets a second.
  const pairs: { round: number; order: number; make: () => Case }[] = [];
  const add = (cs: (() => Case)[]) => cs.forEach((m, round) => pairs.push({ round, order: random(), make: m }));
  for (const [name, s] of Object.entries((params?.properties ?? {}) as Record<string, JSONSchema>)) {
    add(HOSTILE_PATH.filter(([, kinds]) => kinds.includes(kindOf(s))).map(([h]) => () => {
      const v = valid();
      return make(`path ${name}=${h}`, v.p, v.q, v.b, [name, h]);
    }));
  }
  for (const [name, s] of Object.entries((query?.properties ?? {}) as Record<string, JSONSchema>)) {
    add(HOSTILE.filter(([, kinds]) => kinds.includes(kindOf(s))).map(([h]) => () => {
      const v = valid();
      return make(`query ${name}=${JSON.stringify(h.text.slice(0, 40))}`, v.p, { ...v.q, [name]: h }, v.b);
    }));
  }
  if (body) {
    const fields: Field[] = [[[], undefined], ...fieldPaths(body), [['unknown_field'], undefined]];
    for (const [field, s] of fields) {
      add(HOSTILE.filter(([, kinds]) => kinds.includes(kindOf(s))).map(([h]) => () => {
        const v = valid();
        return make(`body ${field.join('.') || '(whole)'}=${h.json.slice(0, 40)}`, v.p, v.q, withValue(v.b, field, h));
      }));
    }
  }
  pairs.sort((a, b) => a.round - b.round || a.order - b.order);
  for (const p of pairs.slice(0, HOSTILE_PER_ROUTE)) out.push(p.make());
  return out;
}

interface Outcome {
  c: Case;
  status: number;
  text: string;
  envelope: boolean;
  ms: number;
}

function isEnvelope(text: string): boolean {
  try {
    const j = JSON.parse(text);
    return (
      JSON.stringify(Object.keys(j).sort()) === '["code","data","message","request_id"]' &&
      typeof j.code === 'string' && typeof j.message === 'string' && typeof j.request_id === 'string' &&
      j.data !== null && typeof j.data === 'object'
    );
  } catch {
    return false;
  }
}

const target = (c: Case): string => `${c.path}${c.query ? `?${c.query}` : ''}`;
const overLong = (c: Case): boolean => targetBytes(c.path, c.query) > MAX_TARGET_BYTES;
/** The answer to a request closed without one: only a head over MAX_HEAD_BYTES may get it (uWS, see head-limit.ts). */
const CLOSED = 0;

async function run(c: Case): Promise<Outcome> {
  const headers = headersFor(c.route);
  if (c.body !== undefined) headers['content-type'] = 'application/json';
  const t0 = Date.now();
  let res: Response;
  let text: string;
  try {
    res = await fetch(`${svc.base}${target(c)}`, { method: c.route.method, headers, body: c.body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    text = await res.text();
  } catch (err) {
    return { c, status: 599, text: `no answer within ${REQUEST_TIMEOUT_MS} ms: ${(err as Error).message}`, envelope: false, ms: Date.now() - t0 };
  }
  return { c, status: res.status, text, envelope: isEnvelope(text), ms: Date.now() - t0 };
}

/**
 * A request whose URL is over the limit, alone on a plain socket: its answer is 414, unless its head is over
 * MAX_HEAD_BYTES and reached the service in pieces, which closes the connection without one. fetch would report
 * both a closed connection and a reset that destroyed the 414 it was sent as "fetch failed".
 */
async function runRaw(c: Case): Promise<Outcome> {
  const headers = headersFor(c.route);
  if (c.body !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(c.body)) });
  const text = head(c.route.method, target(c), headers);
  const conn = new RawConnection(svc.service.port);
  const t0 = Date.now();
  try {
    await conn.send(text + (c.body ?? ''));
    const o = await conn.answer(REQUEST_TIMEOUT_MS);
    if ('closed' in o) {
      const allowed = Buffer.byteLength(text) > MAX_HEAD_BYTES;
      return { c, status: allowed ? CLOSED : 599, text: `closed without an answer (${o.closed}), head ${text.length} bytes`, envelope: false, ms: Date.now() - t0 };
    }
    return { c, status: o.status, text: o.body, envelope: isEnvelope(o.body), ms: Date.now() - t0 };
  } finally {
    conn.close();
  }
}

const routes = allRoutes(svc.service.build);
const all = routes.flatMap(cases);

t.test(`every route of the table, ${all.length} generated and hostile requests: no 5xx, every 4xx in the envelope`, async (t) => {
  const started = Date.now();
  const outcomes: Outcome[] = [];
  const fetched = all.filter((c) => !overLong(c));
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < fetched.length) outcomes.push(await run(fetched[next++]!));
    }),
  );
  const raw = all.filter(overLong);
  for (const c of raw) outcomes.push(await runRaw(c));
  const closed = outcomes.filter((o) => o.status === CLOSED).length;
  t.comment(`${raw.length} requests with a URL over ${MAX_TARGET_BYTES} bytes, one at a time: ${raw.length - closed} answered, ${closed} closed`);
  t.ok(raw.length > 0, 'the hostile set holds URLs over the limit (5,000-level nesting in a query)');
  t.same(outcomes.filter((o) => overLong(o.c) && o.status !== 414 && o.status !== CLOSED).map((o) => `${o.status} ${o.c.route.path} [${o.c.what}]`).slice(0, 10), [],
    'every over-long URL is 414, or closed without an answer when its head is over 4096 bytes');
  for (const o of [...outcomes].sort((x, y) => y.ms - x.ms).slice(0, 5)) {
    t.comment(`slowest: ${o.ms} ms ${o.status} ${o.c.route.method} ${o.c.route.path} [${o.c.what}]`);
  }
  if (process.env.FUZZ_DEBUG) {
    const per = new Map<string, { n: number; ms: number; max: number }>();
    for (const o of outcomes) {
      const k = `${o.c.route.method} ${o.c.route.path}`;
      const e = per.get(k) ?? { n: 0, ms: 0, max: 0 };
      per.set(k, { n: e.n + 1, ms: e.ms + o.ms, max: Math.max(e.max, o.ms) });
    }
    for (const [k, e] of [...per].sort((x, y) => y[1].ms - x[1].ms).slice(0, 25)) t.comment(`${k}: n=${e.n} total=${e.ms} max=${e.max}`);
  }
  const bad = outcomes
    .filter((o) => (o.status >= 500 && !CONFIGURATION_503.test(o.text)) || (o.status >= 400 && !o.envelope))
    .map((o) => `${o.status} ${o.c.route.method} ${o.c.route.path} [${o.c.what}] ${o.text.slice(0, 200)}`);
  t.same(bad.slice(0, 40), [], `${bad.length} bad answers (first 40 shown)`);

  // The fuzzing reached every route, and past validation on most of them (else it proves little).
  const byRoute = new Map<string, number[]>();
  for (const o of outcomes) {
    const key = `${o.c.route.method} ${o.c.route.path}`;
    byRoute.set(key, [...(byRoute.get(key) ?? []), o.status]);
  }
  t.equal(byRoute.size, routes.length, 'every route was requested');
  const reachedHandler = [...byRoute.values()].filter((ss) => ss.some((s) => (s !== CLOSED && s < 400) || s === 404 || s === 409)).length;
  t.ok(reachedHandler >= routes.length * 0.8, `generated requests passed validation on ${reachedHandler} of ${routes.length} routes`);
  // A few seconds on an idle machine; the bound only catches a runaway (the machine may be shared).
  t.ok(Date.now() - started < 120_000, `bounded: ${Date.now() - started} ms`);
});
