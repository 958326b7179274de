import t from 'tap';
import { adminToken, internalToken, startTestService } from '../helpers/harness.js';
import { Authenticator } from '../../src/http/auth.js';
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
  const blocked = (await (async () => auth.authenticate('admin', cred({ authorization: 'Bearer adm' })))().catch((e: unknown) => e)) as AppError;
  t.equal(blocked.code, 'rate_limited', 'even the right token is refused while blocked');
  t.equal(blocked.status, 429);
  t.equal(blocked.headers?.['Retry-After'], '60');
  t.same(await auth.authenticate('admin', cred({ authorization: 'Bearer adm', clientIp: '10.0.0.2' })), { type: 'admin' }, 'other addresses pass');
  now += 30_000;
  t.equal(((await (async () => auth.authenticate('admin', cred({ authorization: 'Bearer adm' })))().catch((e: unknown) => e)) as AppError).headers?.['Retry-After'], '30');
  now += 30_001;
  t.same(await auth.authenticate('admin', cred({ authorization: 'Bearer adm' })), { type: 'admin' }, 'free after the minute');
  const off = new Authenticator(loadConfig({ SVC_ADMIN_TOKEN: 'adm', SVC_AUTH_FAIL_LIMIT: '0' }), () => now);
  for (let i = 0; i < 50; i++) await t.rejects(async () => off.authenticate('admin', cred({ authorization: 'Bearer x' })), { code: 'unauthorized' });
});

t.test('over HTTP: the limiter answers 429 in the envelope; X-Forwarded-For only when trusted', async (t) => {
  const svc = await startTestService({ env: { SVC_AUTH_FAIL_LIMIT: '2', SVC_TRUST_PROXY: 'true' } });
  t.teardown(() => svc.stop());
  const from = (ip: string, token: string) => ({ token, headers: { 'x-forwarded-for': `${ip}, 10.9.9.9` } });
  t.equal((await svc.request('GET', '/admin/features', from('1.1.1.1', 'bad'))).status, 401);
  t.equal((await svc.request('GET', '/admin/features', from('1.1.1.1', 'bad'))).status, 401);
  const r = await svc.request('GET', '/admin/features', from('1.1.1.1', adminToken));
  t.equal(r.status, 429);
  t.equal(r.json.code, 'rate_limited');
  t.ok(Number(r.headers.get('retry-after')) > 0);
  t.equal((await svc.request('GET', '/admin/features', from('2.2.2.2', adminToken))).status, 200);
  t.equal((await svc.request('GET', '/health')).status, 200, 'public routes are not limited');
  t.ok(internalToken);
});

t.test('over HTTP, proxy not trusted: the socket address is the key, X-Forwarded-For is ignored', async (t) => {
  const svc = await startTestService({ env: { SVC_AUTH_FAIL_LIMIT: '2' } });
  t.teardown(() => svc.stop());
  const from = (ip: string, token: string) => ({ token, headers: { 'x-forwarded-for': ip } });
  t.equal((await svc.request('GET', '/admin/features', from('1.1.1.1', 'bad'))).status, 401);
  t.equal((await svc.request('GET', '/admin/features', from('2.2.2.2', 'bad'))).status, 401);
  t.equal((await svc.request('GET', '/admin/features', from('3.3.3.3', adminToken))).status, 429, 'all came from 127.0.0.1');
  t.equal((await svc.request('POST', '/logs', { body: { key_id: 1, master_id: 1, status_code: 200 } })).status, 202, 'public routes are not limited');
});
