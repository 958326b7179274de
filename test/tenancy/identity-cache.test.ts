import t from 'tap';
import { IdentityCache } from '../../src/actors/tenancy/identity-cache.js';
import type { KeyState } from '../../src/actors/tenancy/metadata.js';
import type { KeyIdentity } from '../../src/actors/tenancy/views.js';
import { openStore } from '../../src/storage/redis/open.js';
import { configChange, tenancyKeys } from '../../src/storage/redis/layout.js';
import { sha256Hex } from '../../src/http/auth.js';
import { startTestService, adminToken, internalToken, eventually, type TestService } from '../helpers/harness.js';

const identity = (id: number, masterId: number): KeyIdentity =>
  ({ id, master_id: masterId, name: `k${id}`, status: 'active', expires_at: null }) as KeyIdentity;
const state = (over: Partial<KeyState> = {}): KeyState => ({
  status: 'active', revoked: false, expiresAt: 0, issuedAtEpoch: 1, masterStatus: 'active', masterEpoch: 1, ...over,
});

t.test('IdentityCache: fills, judges on every read, drops what a write touches', async (t) => {
  const cache = new IdentityCache(1000, 3);
  const now = 1_000_000;
  t.equal(cache.lookup('a', now), undefined, 'empty');

  cache.fill('a', identity(1, 10), state(), cache.generation, now);
  t.equal(cache.lookup('a', now + 999)?.id, 1, 'served within the age limit');
  t.equal(cache.lookup('a', now + 1000), undefined, 'too old: read again');
  cache.fill('a', identity(1, 10), state(), cache.generation, now);
  t.equal(cache.lookup('a', now - 1), undefined, 'a clock that went back: read again');

  cache.fill('e', identity(2, 10), state({ expiresAt: now / 1000 + 0.5 }), cache.generation, now);
  t.equal(cache.lookup('e', now)?.id, 2);
  t.equal(cache.lookup('e', now + 500), null, 'expired since it was read: refused without a store read');

  // A read that raced a write is not kept.
  const before = cache.generation;
  cache.storeWritten([{ op: 'hset', key: tenancyKeys.token('x'), fields: { status: 'suspended' } }]);
  cache.fill('x', identity(3, 10), state(), before, now);
  t.equal(cache.lookup('x', now), undefined, 'stale fill refused');
  // Writes elsewhere in the store neither drop entries nor refuse fills.
  const g = cache.generation;
  cache.storeWritten([{ op: 'set', key: 'meta:config:version', value: '9' }, { op: 'publish', channel: 'c', message: '{}' }]);
  t.equal(cache.generation, g);

  // A token write drops that token; a master write drops all of the master's tokens.
  cache.clear();
  cache.fill('a', identity(1, 10), state(), cache.generation, now);
  cache.fill('b', identity(2, 10), state(), cache.generation, now);
  cache.fill('c', identity(3, 11), state(), cache.generation, now);
  cache.storeWritten([{ op: 'del', key: tenancyKeys.token('a') }]);
  t.equal(cache.lookup('a', now), undefined);
  t.equal(cache.lookup('b', now)?.id, 2);
  cache.storeWritten([{ op: 'hset', key: tenancyKeys.master(10), fields: { epoch: '2' } }]);
  t.equal(cache.lookup('b', now), undefined, 'master 10 changed');
  t.equal(cache.lookup('c', now)?.id, 3, 'master 11 untouched');

  // Bounded: the oldest fill goes first.
  cache.clear();
  for (const h of ['a', 'b', 'c', 'd']) cache.fill(h, identity(1, 10), state(), cache.generation, now);
  t.equal(cache.size, 3);
  t.equal(cache.lookup('a', now), undefined);
  t.equal(cache.lookup('d', now)?.id, 1);

  // Announcements: tenancy kinds (or unreadable messages) empty it; others do not.
  cache.announced(JSON.stringify({ kind: 'features', at: now }));
  t.equal(cache.size, 3);
  for (const message of [JSON.stringify({ kind: 'quota', at: now }), JSON.stringify({ kind: 'keys', at: now, ids: [1] }), 'not json']) {
    cache.fill('a', identity(1, 10), state(), cache.generation, now);
    cache.announced(message);
    t.equal(cache.size, 0, message);
  }

  const off = new IdentityCache(0);
  off.fill('a', identity(1, 10), state(), off.generation, now);
  t.equal(off.lookup('a', now), undefined, 'SVC_IDENTITY_CACHE_MS=0: nothing kept');
});

async function keyOf(svc: TestService) {
  const m = (await svc.request('POST', '/admin/masters', { token: adminToken, body: { name: 'c', group: 'default' } })).json;
  const k = (await svc.request('POST', `/admin/masters/${m.id}/keys`, { token: adminToken, body: { name: 'one' } })).json;
  return { masterId: m.id as number, masterKey: m.master_key as string, keyId: k.id as number, secret: k.key_secret as string };
}

t.test('whoami through the cache sees every change of this node at once', async (t) => {
  const svc = await startTestService({ env: { SVC_IDENTITY_CACHE_MS: '600000' } });
  t.teardown(() => svc.stop());
  const { masterId, masterKey, keyId, secret } = await keyOf(svc);
  const who = () => svc.request('GET', '/auth/whoami', { token: secret });
  const admin = (method: string, path: string, body?: unknown) => svc.request(method, path, { token: adminToken, body });

  t.equal((await who()).json.name, 'one');
  t.equal((await who()).json.name, 'one', 'second read (cached)');
  t.equal((await svc.request('PUT', `/v1/tokens/${keyId}`, { token: masterKey, body: { name: 'two' } })).status, 200);
  t.equal((await who()).json.name, 'two', 'update');

  // quota_used advanced by a stats flush.
  const flush = await svc.request('POST', '/internal/stats/flush', {
    headers: { 'x-internal-token': internalToken },
    body: { keys: [{ token_hash: sha256Hex(secret), requests: 1, tokens: 42, last_accessed_at: Math.floor(Date.now() / 1000) }] },
  });
  t.equal(flush.status, 200);
  t.equal((await who()).json.quota_used, 42, 'quota flushed');

  t.equal((await admin('POST', `/admin/masters/${masterId}/freeze`)).status, 200);
  t.equal((await who()).status, 401, 'master frozen');
  t.equal((await admin('POST', `/admin/masters/${masterId}/unfreeze`)).status, 200);
  t.equal((await who()).status, 200, 'master unfrozen');
  t.equal((await admin('POST', `/admin/masters/${masterId}/keys/${keyId}/revoke`)).status, 200);
  t.equal((await who()).status, 401, 'revoked');
});

t.test("whoami through the cache sees another node's change when it is announced, and any change after SVC_IDENTITY_CACHE_MS", async (t) => {
  const svc = await startTestService({ env: { SVC_IDENTITY_CACHE_MS: '60000' } });
  t.teardown(() => svc.stop());
  if (!svc.usingRedis) {
    t.pass('skipped: another node needs a shared Redis');
    return;
  }
  const other = await openStore({ url: svc.config.redisUrl });
  t.teardown(() => other.close());
  const { masterId, secret } = await keyOf(svc);
  const who = () => svc.request('GET', '/auth/whoami', { token: secret });
  const token = tenancyKeys.token(sha256Hex(secret));
  t.equal((await who()).status, 200);

  // Written and announced by another node (as its relay does): refused as soon as the message arrives.
  await other.apply([{ op: 'hset', key: token, fields: { status: 'suspended' } }, configChange('keys', Date.now())]);
  await eventually(async () => (await who()).status === 401 || Promise.reject(new Error('still served')));
  t.pass('announced suspension seen');
  await other.apply([{ op: 'hset', key: token, fields: { status: 'active' } }, configChange('keys', Date.now())]);
  await eventually(async () => (await who()).status === 200 || Promise.reject(new Error('still refused')));

  // Written without an announcement: served from the cache until the entry is too old.
  await other.apply([{ op: 'hset', key: tenancyKeys.master(masterId), fields: { status: 'suspended' } }]);
  t.equal((await who()).status, 200, 'unannounced change not seen yet');
  svc.service.clock.advance(60_000);
  t.equal((await who()).status, 401, 'seen once the entry is older than SVC_IDENTITY_CACHE_MS');
});
