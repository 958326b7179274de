import t from 'tap';
import { adminToken, internalToken, startTestService } from '../helpers/harness.js';
import { Authenticator } from '../../src/http/auth.js';
import { forwardedClient } from '../../src/http/server.js';
import { loadConfig } from '../../src/config/load.js';
import { AppError } from '../../src/errors.js';

const cred = (over: Partial<{ authorization: string; internalToken: string; clientIp: string }> = {}) => ({
  authorization: '',
  internalToken: '',
  clientIp: '10.0.0.1',
  ...over,
});

t.test('internal role: the configured token, nothing else', async (t) => {
  const auth = new Authenticator(loadConfig({ SVC_INTERNAL_STATS_TOKEN: 'tok' }), Date.now);
  t.same(await auth.authenticate('internal', cred({ internalToken: 'tok' })), { type: 'internal' });
  await t.rejects(async () => auth.authenticate('internal', cred({ internalToken: 'nope' })), { code: 'unauthorized' });
  await t.rejects(async () => auth.authenticate('internal', cred()), { code: 'unauthorized' });
});

t.test('internal role without a configured token: refused unless anonymous is allowed', async (t) => {
  const closed = new Authenticator(loadConfig({}), Date.now);
  await t.rejects(async () => closed.authenticate('internal', cred({ internalToken: 'anything' })), { code: 'unauthorized' });
  const open = new Authenticator(loadConfig({ SVC_INTERNAL_ALLOW_ANONYMOUS: 'true' }), Date.now);
  t.same(await open.authenticate('internal', cred()), { type: 'internal' });
});

t.test('admin role without a configured admin token: every request is 401', async (t) => {
  const auth = new Authenticator(loadConfig({}), Date.now);
  await t.rejects(async () => auth.authenticate('admin', cred({ authorization: 'Bearer ' })), { code: 'unauthorized' });
  await t.rejects(async () => auth.authenticate('admin', cred({ authorization: 'Bearer undefined' })), { code: 'unauthorized' });
});

t.test('repeated failures from one address: 429 with Retry-After until the minute passes', async (t) => {
  let now = 1_000_000;
  const auth = new Authenticator(loadConfig({ SVC_ADMIN_TOKEN: 'adm', SVC_AUTH_FAIL_LIMIT: '3' }), () => now);
  for (let i = 0; i < 3; i++) await t.rejects(async () => auth.authenticate('admin', cred({ authorization: 'Bearer x' })), { code: 'unauthorized' });
  const blocked = (await (async () => auth.authenticate('admin', cred({ authorization: 'Bearer x' })))().catch((e: unknown) => e)) as AppError;
  t.equal(blocked.code, 'rate_limited', 'a bad token is refused with 429 while the address is throttled');
  t.equal(blocked.status, 429);
  t.equal(blocked.headers?.['Retry-After'], '60');
  t.same(await auth.authenticate('admin', cred({ authorization: 'Bearer adm' })), { type: 'admin' }, 'the right token still passes');
  const none = (await (async () => auth.authenticate('admin', cred()))().catch((e: unknown) => e)) as AppError;
  t.equal(none.code, 'rate_limited', 'no credential at all: 429 as well');
  t.equal((await (async () => auth.authenticate('admin', cred({ authorization: 'Bearer x', clientIp: '10.0.0.2' })))().catch((e: unknown) => e) as AppError).code, 'unauthorized', 'other addresses are not throttled');
  now += 30_000;
  t.equal(((await (async () => auth.authenticate('admin', cred({ authorization: 'Bearer x' })))().catch((e: unknown) => e)) as AppError).headers?.['Retry-After'], '30');
  now += 30_001;
  t.equal(((await (async () => auth.authenticate('admin', cred({ authorization: 'Bearer x' })))().catch((e: unknown) => e)) as AppError).code, 'unauthorized', 'counted afresh after the minute');
  const off = new Authenticator(loadConfig({ SVC_ADMIN_TOKEN: 'adm', SVC_AUTH_FAIL_LIMIT: '0' }), () => now);
  for (let i = 0; i < 50; i++) await t.rejects(async () => off.authenticate('admin', cred({ authorization: 'Bearer x' })), { code: 'unauthorized' });
});

t.test('over HTTP: the limiter answers 429 in the envelope; X-Forwarded-For only when trusted', async (t) => {
  const svc = await startTestService({ env: { SVC_AUTH_FAIL_LIMIT: '2', SVC_TRUST_PROXY: 'true' } });
  t.teardown(() => svc.stop());
  const from = (ip: string, token: string) => ({ token, headers: { 'x-forwarded-for': `${ip}, 10.9.9.9` } });
  // The proxy appended the address it received from (the rightmost entry); what is left of it the client wrote.
  t.equal((await svc.request('GET', '/admin/features', from('1.1.1.1', 'bad'))).status, 401);
  t.equal((await svc.request('GET', '/admin/features', from('2.2.2.2', 'bad'))).status, 401);
  const r = await svc.request('GET', '/admin/features', from('3.3.3.3', 'bad'));
  t.equal(r.status, 429, 'a new client-written entry does not evade the limiter: 10.9.9.9 is throttled');
  t.equal(r.json.code, 'rate_limited');
  t.ok(Number(r.headers.get('retry-after')) > 0);
  t.equal((await svc.request('GET', '/admin/features', from('1.1.1.1', adminToken))).status, 200, 'valid credentials pass a throttled address');
  const viaOther = { token: 'bad', headers: { 'x-forwarded-for': '10.9.9.9, 10.8.8.8' } };
  t.equal((await svc.request('GET', '/admin/features', viaOther)).status, 401, 'a client cannot aim the limiter at another address');
  t.equal((await svc.request('GET', '/health')).status, 200, 'public routes are not limited');
});

t.test('over HTTP: twenty bad tries from a shared egress do not lock out valid credentials (data plane)', async (t) => {
  const svc = await startTestService({ env: { SVC_AUTH_FAIL_LIMIT: '20', SVC_TRUST_PROXY: 'true', SVC_TRUST_PROXY_HOPS: '2' } });
  t.teardown(() => svc.stop());
  // Two trusted proxies: the client address is the second entry from the right.
  const egress = (token: string, headers: Record<string, string> = {}) => ({ token, headers: { 'x-forwarded-for': 'spoofed, 203.0.113.7, 10.0.0.1', ...headers } });
  for (let i = 0; i < 20; i++) t.equal((await svc.request('GET', '/admin/features', egress('bad'))).status, 401);
  t.equal((await svc.request('GET', '/admin/features', egress('bad'))).status, 429, 'the egress address is throttled for bad credentials');
  const flush = await svc.request('POST', '/internal/stats/flush', {
    body: { keys: [], upstream_keys: [] },
    headers: { 'x-forwarded-for': 'other, 203.0.113.7, 10.0.0.1', 'x-internal-token': internalToken },
  });
  t.equal(flush.status, 200, 'the data plane behind the same egress still flushes');
  const wrongInternal = await svc.request('POST', '/internal/stats/flush', {
    body: { keys: [], upstream_keys: [] },
    headers: { 'x-forwarded-for': '203.0.113.7, 10.0.0.1', 'x-internal-token': 'nope' },
  });
  t.equal(wrongInternal.status, 429, 'a bad internal token from there is refused with 429');
  t.equal((await svc.request('GET', '/admin/features', egress(adminToken))).status, 200);
  t.equal((await svc.request('GET', '/admin/features', { token: 'bad', headers: { 'x-forwarded-for': '203.0.113.8, 10.0.0.1' } })).status, 401, 'another client address is not throttled');
});

t.test('over HTTP, proxy not trusted: the socket address is the key, X-Forwarded-For is ignored', async (t) => {
  const svc = await startTestService({ env: { SVC_AUTH_FAIL_LIMIT: '2' } });
  t.teardown(() => svc.stop());
  const from = (ip: string, token: string) => ({ token, headers: { 'x-forwarded-for': ip } });
  t.equal((await svc.request('GET', '/admin/features', from('1.1.1.1', 'bad'))).status, 401);
  t.equal((await svc.request('GET', '/admin/features', from('2.2.2.2', 'bad'))).status, 401);
  t.equal((await svc.request('GET', '/admin/features', from('3.3.3.3', 'bad'))).status, 429, 'all came from 127.0.0.1');
  t.equal((await svc.request('POST', '/logs', { body: { key_id: 1, master_id: 1, status_code: 200 } })).status, 202, 'public routes are not limited');
});

t.test('forwardedClient: the entry the trusted proxies appended, counted from the right', async (t) => {
  t.equal(forwardedClient('1.1.1.1, 2.2.2.2, 3.3.3.3', 1), '3.3.3.3');
  t.equal(forwardedClient('1.1.1.1, 2.2.2.2, 3.3.3.3', 2), '2.2.2.2');
  t.equal(forwardedClient('1.1.1.1,2.2.2.2', 5), '1.1.1.1', 'fewer entries than hops: the leftmost');
  t.equal(forwardedClient('', 1), '', 'no header: the socket address is used');
});
