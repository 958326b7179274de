/**
 * The value rules of src/contract/value-rules.ts: the date-time rule and the
 * hardening of schemas on their own, then each class of input that used to be
 * a 500 (issue 20 §2), through HTTP, answered 400 naming the field, and the
 * values at the edges of the stated ranges accepted and stored.
 */
import t from 'tap';
import { adminToken, eventually, startTestService } from '../helpers/harness.js';
import { compileBody, compileParams } from '../../src/contract/validate.js';
import { dateTimeMs, harden, LOG_TIME_END_SECONDS, MAX_DEPTH, MAX_INTEGER } from '../../src/contract/value-rules.js';

t.test('dateTimeMs: RFC 3339 as the code can read it', async (t) => {
  t.equal(dateTimeMs('2026-01-02T03:04:05Z'), Date.UTC(2026, 0, 2, 3, 4, 5));
  t.equal(dateTimeMs('2026-01-02T03:04:05.123456789+05:30'), Date.UTC(2026, 0, 1, 21, 34, 5, 123));
  t.equal(dateTimeMs('2024-02-29T00:00:00Z'), Date.UTC(2024, 1, 29));
  t.equal(dateTimeMs('0001-01-01T00:00:00Z'), -62_135_596_800_000);
  t.equal(dateTimeMs('9999-12-31T23:59:59.999Z'), 253_402_300_799_999);
  for (const bad of [
    '2030-06-30T23:59:60Z', // leap second
    '0000-01-01T00:00:00+01:00', // UTC year -1
    '0001-01-01T00:00:00+00:01', // before year 1 in UTC
    '9999-12-31T23:59:59-01:00', // UTC year 10000
    '2023-02-29T00:00:00Z',
    '2026-02-30T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-01-01T24:00:00Z',
    '2026-01-01T00:00:00+24:00',
    '2026-01-01T00:00:00', // no offset
    '2026-01-01',
    '2026-01-01T00:00:00.1234567890Z',
  ]) {
    t.ok(Number.isNaN(dateTimeMs(bad)), bad);
  }
});

t.test('harden: bounds, string rules and free-form checks, the declaration untouched', async (t) => {
  const declared = { type: 'object', properties: { n: { type: 'integer' }, s: { type: 'string' }, m: { type: 'object', additionalProperties: true } } };
  const copy = JSON.stringify(declared);
  const h = harden(declared) as any;
  t.equal(JSON.stringify(declared), copy, 'the route declaration is not changed');
  t.match(h.properties.n, { minimum: -MAX_INTEGER, maximum: MAX_INTEGER, finite: true });
  t.match(h.properties.s, { wellFormed: true, noNul: true });
  t.same(h.properties.m.freeForm, { allowNul: false });
  t.notOk((harden(declared, { allowNul: true }) as any).properties.s.noNul, 'NUL allowed where asked (log records)');
  t.match(harden({ type: 'integer', minimum: 1, maximum: 5 }), { minimum: 1, maximum: 5 }, 'declared bounds are kept');

  const v = compileBody(declared);
  const errors = (value: unknown) => (v(value) ? null : v.errors!.map((e) => `${e.instancePath} ${e.message}`));
  t.same(errors({ n: 1, s: 'ok', m: { a: [1, { b: 'c' }] } }), null);
  t.match(errors({ n: 2 ** 63 }), ['/n must be <= 9007199254740991']);
  t.match(errors({ s: 'a\u0000b' }), [/^\/s must not contain NUL/]);
  t.match(errors({ s: 'a\ud800' }), [/^\/s must be well-formed Unicode/]);
  t.match(errors({ m: { x: ['\udfff'] } }), [/^\/m\/x\/0 must be well-formed Unicode/]);
  t.match(errors({ m: { ['k\u0000']: 1 } }), [/^\/m has a key that must not contain NUL/]);
  let deep: unknown = 1;
  for (let i = 0; i < 5000; i++) deep = { a: deep };
  t.match(errors({ m: deep }), [new RegExp(`nests deeper than ${MAX_DEPTH} levels`)]);

  const q = compileParams({ type: 'object', properties: { id: { type: 'integer', minimum: 0 } } });
  for (const text of ['Infinity', '1e400', '1e19', '9223372036854775808']) t.notOk(q({ id: text }), `query ${text}`);
  t.ok(q({ id: '9007199254740991' }));
});

const svc = await startTestService();
t.teardown(() => svc.stop());
const admin = { token: adminToken };
const json = { 'content-type': 'application/json' };

/** Sends a body as written (escapes, numbers JSON.stringify cannot spell). */
const raw = (method: string, path: string, body: string) => svc.request(method, path, { ...admin, rawBody: body, headers: json });

t.test('query times: since=0 reads from the epoch; beyond log time is a 400', async (t) => {
  for (const path of ['/admin/logs?since=0', '/admin/audit?since=0', `/admin/logs/stats?since=0&until=${LOG_TIME_END_SECONDS}`]) {
    const r = await svc.request('GET', path, admin);
    t.equal(r.status, 200, path);
  }
  for (const path of [
    '/admin/logs?until=253402300799',
    '/admin/logs/stats?since=0&until=253402300799', // the old schema maximum
    '/admin/api-keys/stats?since=0&until=99999999999999',
    '/admin/audit?since=-1',
  ]) {
    const r = await svc.request('GET', path, admin);
    t.equal(r.status, 400, path);
    t.match(r.json.data, { [path.includes('since=-1') ? 'since' : 'until']: /must be/ }, path);
  }
  const m = await svc.request('GET', `/v1/logs?since=0`, admin);
  t.not(m.status, 500, '/v1/logs with a wrong credential is not a 500 either');
});

t.test('integers beyond the safe range, Infinity and 1e400: 400 in paths, queries and bodies', async (t) => {
  const cases: [string, string, string?][] = [
    ['GET', '/admin/masters/1e19'],
    ['GET', '/admin/masters/9223372036854775808'],
    ['GET', '/admin/logs?master_id=Infinity'],
    ['GET', '/admin/logs?master_id=1e400'],
    ['PUT', '/admin/features', '{"log_max_records":1e400}'],
    ['PUT', '/admin/api-keys/batch/status', '{"ids":[9223372036854775808],"status":"active"}'],
  ];
  for (const [method, path, body] of cases) {
    const r = body ? await raw(method, path, body) : await svc.request(method, path, admin);
    t.equal(r.status, 400, `${method} ${path} ${body ?? ''}`);
    t.equal(r.json.code, 'bad_request');
    t.ok(Object.keys(r.json.data).length > 0, 'the field is named');
  }
});

t.test('NUL in a string stored in Postgres: 400 naming the field', async (t) => {
  const r = await raw('POST', '/admin/masters', '{"name":"a\\u0000b","group":"g"}');
  t.equal(r.status, 400);
  t.match(r.json.data, { name: /NUL/ });
  const g = await raw('POST', '/admin/provider-groups', '{"name":"g","type":"openai","base_url":"https://x.invalid","static_headers":{"X-A\\u0000":"v"}}');
  t.equal(g.status, 400, 'header names too');
});

t.test('dates the code cannot hold: leap second, year 0000 with an offset, UTC year 10000', async (t) => {
  const group = await svc.request('POST', '/admin/provider-groups', { ...admin, body: { name: 'dates', type: 'openai', base_url: 'https://x.invalid' } });
  t.equal(group.status, 201);
  for (const when of ['2030-06-30T23:59:60Z', '0000-01-01T00:00:00+01:00', '9999-12-31T23:59:59-01:00']) {
    const r = await svc.request('POST', '/admin/api-keys', { ...admin, body: { group_id: group.json.id, api_key: 'k', ban_until: when } });
    t.equal(r.status, 400, when);
    t.match(r.json.data, { ban_until: /RFC 3339/ });
    const m = await svc.request('POST', '/admin/masters', { ...admin, body: { name: 'm', group: 'g' } });
    const k = await svc.request('POST', `/admin/masters/${m.json.id}/keys`, { ...admin, body: { expires_at: when } });
    t.equal(k.status, 400, `expires_at ${when}`);
  }
  const ok = await svc.request('POST', '/admin/api-keys', { ...admin, body: { group_id: group.json.id, api_key: 'k', ban_until: '2030-06-30T23:59:59+02:00' } });
  t.equal(ok.status, 201);
  t.equal(ok.json.ban_until, '2030-06-30T21:59:59.000Z');
});

t.test('alert metadata: a lone surrogate and 5,000-level nesting are 400s, not a retry invitation', async (t) => {
  const deep = `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`;
  const alert = (metadata: string) => raw('POST', '/admin/alerts', `{"type":"custom","severity":"info","message":"m","metadata":${metadata}}`);
  const s = await alert('{"x":"\\ud800"}');
  t.equal(s.status, 400);
  t.match(s.json.data, { 'metadata.x': /well-formed Unicode/ });
  const n = await alert(`{"x":${deep}}`);
  t.equal(n.status, 400);
  t.match(Object.values(n.json.data), [/nests deeper than 32 levels/]);
  const fine = await alert('{"x":{"y":[1,"two",null]}}');
  t.equal(fine.status, 201);
});

t.test('log records: refused before the 202 when not storable; NUL is stored as sent', async (t) => {
  const post = (body: string) => svc.request('POST', '/logs', { rawBody: body, headers: json });
  for (const [body, field] of [
    ['{"key_id":1,"master_id":1,"status_code":200,"model":"\\ud800"}', 'model'],
    ['{"key_id":1,"master_id":1,"status_code":200,"createdAt":"2030-06-30T23:59:60Z"}', 'createdAt'],
    ['{"key_id":1,"master_id":1,"status_code":200,"createdAt":"0000-01-01T00:00:00+01:00"}', 'createdAt'],
    ['{"key_id":1,"master_id":1,"status_code":200,"createdAt":"1969-12-31T23:59:59Z"}', 'createdAt'],
    ['{"key_id":1,"master_id":1,"status_code":200,"createdAt":"2100-01-01T00:00:00Z"}', 'createdAt'],
    ['{"key_id":1e400,"master_id":1,"status_code":200}', 'key_id'],
  ]) {
    const r = await post(body);
    t.equal(r.status, 400, body);
    t.ok(field in r.json.data, `${field} is named`);
  }
  const ok = await post(
    '[{"key_id":7,"master_id":77,"status_code":200,"createdAt":"1970-01-01T00:00:00Z","error_message":"a\\u0000b"},' +
      '{"key_id":7,"master_id":77,"status_code":200,"createdAt":"2099-12-31T23:59:59.999Z"}]',
  );
  t.equal(ok.status, 202);
  const stored = await eventually(async () => {
    const r = await svc.request('GET', '/admin/logs?master_id=77&since=0', admin);
    // The two records are in different partitions, so they are two inserts: wait for the list to show both.
    return r.json.total === 2 && r.json.items.length === 2 ? r.json : null;
  }, 15_000);
  t.ok(stored, 'both records stored');
  const times = stored.items.map((i: any) => i.createdAt).sort();
  t.same(times, ['1970-01-01T00:00:00.000Z', '2099-12-31T23:59:59.999Z']);
  t.equal(stored.items.find((i: any) => i.error_message !== '')?.error_message, 'a\u0000b', 'NUL kept');
});
