import t from 'tap';

type Tap = Parameters<Parameters<typeof t.test>[0]>[0];
import { IdentityCache } from '../../src/actors/tenancy/identity-cache.js';
import type { KeyState } from '../../src/actors/tenancy/metadata.js';
import type { KeyIdentity } from '../../src/actors/tenancy/views.js';
import { openStore } from '../../src/storage/redis/open.js';
import type { SharedStore } from '../../src/storage/redis/store.js';
import { configChange, tenancyKeys } from '../../src/storage/redis/layout.js';
import { sha256Hex } from '../../src/contract/hash.js';
import { quotaUsedOp } from '../../src/storage/redis/writers/tenancy.js';
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
  const cleared = cache.stats.cleared;
  const empties = [
    JSON.stringify({ kind: 'quota', at: now }),
    JSON.stringify({ kind: 'quota', at: now, ids: ['not', 'ids'] }),
    JSON.stringify({ kind: 'keys', at: now, ids: [1] }),
    JSON.stringify({ kind: 'masters', at: now, ids: [10] }),
    'not json',
  ];
  for (const message of empties) {
    cache.fill('a', identity(1, 10), state(), cache.generation, now);
    cache.announced(message);
    t.equal(cache.size, 0, message);
  }
  t.equal(cache.stats.cleared - cleared, empties.length, 'each emptying counted');

  // A quota change names the keys it wrote (by id): only those go.
  cache.fill('a', identity(1, 10), state(), cache.generation, now);
  cache.fill('b', identity(2, 10), state(), cache.generation, now);
  cache.fill('c', identity(3, 11), state(), cache.generation, now);
  const g2 = cache.generation;
  cache.announced(JSON.stringify({ kind: 'quota', at: now, ids: [2, 3, 99] }));
  t.equal(cache.lookup('a', now)?.id, 1, 'a key the flush did not name stays');
  t.equal(cache.lookup('b', now), undefined);
  t.equal(cache.lookup('c', now), undefined);
  t.equal(cache.stats.narrowed, 1);
  t.not(cache.generation, g2, 'a read racing the announcement is not kept');
  // The id index follows the entries: a dropped key's id no longer reaches a token refilled under another id.
  cache.storeWritten([{ op: 'del', key: tenancyKeys.token('a') }]);
  cache.fill('a', identity(4, 10), state(), cache.generation, now);
  cache.announced(JSON.stringify({ kind: 'quota', at: now, ids: [1] }));
  t.equal(cache.lookup('a', now)?.id, 4);
  const hits = cache.stats.hits;
  const misses = cache.stats.misses;
  cache.lookup('a', now);
  cache.lookup('zz', now);
  t.same([cache.stats.hits - hits, cache.stats.misses - misses], [1, 1], 'hits and misses counted');

  const off = new IdentityCache(0);
  off.fill('a', identity(1, 10), state(), off.generation, now);
  t.equal(off.lookup('a', now), undefined, 'SVC_IDENTITY_CACHE_MS=0: nothing kept');
});

t.test('IdentityCache: master keys are kept until their master changes, any tenancy announcement or their age', async (t) => {
  const cache = new IdentityCache(1000, 2);
  const now = 1_000_000;
  const master = (id: number, status = 'active') => ({ id, name: `m${id}`, group: 'default', epoch: 1, status });
  t.equal(cache.lookupMaster('m', now), undefined, 'empty');
  cache.fillMaster('m', master(10), cache.generation, now);
  t.equal(cache.lookupMaster('m', now + 999)?.id, 10, 'served within the age limit');
  t.equal(cache.lookupMaster('m', now + 1000), undefined, 'too old: read again');
  cache.fillMaster('m', master(10), cache.generation, now);
  t.equal(cache.lookupMaster('m', now - 1), undefined, 'a clock that went back: read again');

  // A read that raced a change of any master or token is not kept.
  const before = cache.generation;
  cache.storeWritten([{ op: 'hset', key: tenancyKeys.master(10), fields: { status: 'suspended' } }]);
  cache.fillMaster('m', master(10), before, now);
  t.equal(cache.lookupMaster('m', now), undefined, 'stale fill refused');

  // A master's write drops that master's key (rotation, deletion, suspension all write its hash), not others'.
  cache.fillMaster('m', master(10), cache.generation, now);
  cache.fillMaster('n', master(11), cache.generation, now);
  cache.storeWritten([{ op: 'hset', key: tenancyKeys.token('x'), fields: { status: 'suspended' } }]);
  t.equal(cache.lookupMaster('m', now)?.id, 10, 'a token write leaves master keys');
  cache.storeWritten([{ op: 'hset', key: tenancyKeys.master(10), fields: { epoch: '2' } }]);
  t.equal(cache.lookupMaster('m', now), undefined, 'master 10 changed');
  t.equal(cache.lookupMaster('n', now)?.id, 11, 'master 11 untouched');

  // A quota change names keys and changes no master; every other tenancy announcement empties the cache.
  cache.fillMaster('m', master(10), cache.generation, now);
  cache.announced(JSON.stringify({ kind: 'quota', at: now, ids: [10, 11] }));
  t.equal(cache.lookupMaster('m', now)?.id, 10, 'kept through a quota change');
  for (const message of [JSON.stringify({ kind: 'masters', at: now, ids: [99] }), JSON.stringify({ kind: 'keys', at: now, ids: [1] }), 'not json']) {
    cache.fillMaster('m', master(10), cache.generation, now);
    cache.announced(message);
    t.equal(cache.masterSize, 0, message);
  }

  // Bounded like the keys; hits and misses counted apart from theirs.
  for (const h of ['a', 'b', 'c']) cache.fillMaster(h, master(12), cache.generation, now);
  t.equal(cache.masterSize, 2);
  t.equal(cache.lookupMaster('a', now), undefined, 'the oldest fill went first');
  const { hits, masterHits, masterMisses } = cache.stats;
  cache.lookupMaster('c', now);
  cache.lookupMaster('zz', now);
  t.same([cache.stats.masterHits - masterHits, cache.stats.masterMisses - masterMisses, cache.stats.hits - hits], [1, 1, 0]);

  const off = new IdentityCache(0);
  off.fillMaster('m', master(10), off.generation, now);
  t.equal(off.lookupMaster('m', now), undefined, 'SVC_IDENTITY_CACHE_MS=0: nothing kept');
});

/** The identity cache's series of /metrics. */
async function cacheMetrics(svc: TestService) {
  const text = (await svc.request('GET', '/metrics', { headers: { 'x-internal-token': internalToken } })).text;
  const value = (series: string) => Number(text.split('\n').find((l) => l.startsWith(`${series} `))?.slice(series.length + 1) ?? NaN);
  return {
    hits: value('identity_cache_hits_total'),
    misses: value('identity_cache_misses_total'),
    emptied: value('identity_cache_invalidations_total{scope="all"}'),
    narrowed: value('identity_cache_invalidations_total{scope="keys"}'),
  };
}

/**
 * Warms whoami for keys a and b, runs `change` (a quota change of a alone),
 * waits until the cache has heard it, and checks that b is still answered from
 * the cache while a is read again with `quotaUsed`. Pub/sub channels are shared
 * by every Redis db, so another test run's announcement may empty the cache
 * meanwhile: such an attempt is run again.
 */
async function onlyTouchedKeyDropped(
  t: Tap,
  svc: TestService,
  a: string,
  b: string,
  change: (attempt: number) => Promise<number>,
): Promise<void> {
  const who = async (secret: string) => (await svc.request('GET', '/auth/whoami', { token: secret })).json;
  for (let attempt = 1; ; attempt++) {
    for (const secret of [a, b, a, b]) await who(secret);
    const before = await cacheMetrics(svc);
    const quotaUsed = await change(attempt);
    t.ok(await eventually(async () => (await cacheMetrics(svc)).narrowed > before.narrowed), 'the quota change was heard');
    const whoB = await who(b);
    const whoA = await who(a);
    const after = await cacheMetrics(svc);
    if (after.emptied !== before.emptied && attempt < 5) continue;
    t.equal(after.emptied, before.emptied, 'nothing emptied the cache');
    t.equal(whoA.quota_used, quotaUsed, 'the key the change wrote shows its new quota');
    t.equal(whoB.quota_used, 0, 'the other key is unchanged');
    t.equal(after.hits - before.hits, 1, 'the other key was answered from the cache');
    t.equal(after.misses - before.misses, 1, 'the key the change wrote was read again');
    return;
  }
}

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

t.test('a master key through the cache: every change of this node in force at once, whoami always fresh', async (t) => {
  const svc = await startTestService({ env: { SVC_IDENTITY_CACHE_MS: '600000' } });
  t.teardown(() => svc.stop());
  const { masterId, masterKey } = await keyOf(svc);
  const tokens = (key: string) => svc.request('GET', '/v1/tokens', { token: key });
  const whoMaster = (key: string) => svc.request('GET', '/auth/whoami', { token: key });
  const admin = (method: string, path: string, body?: unknown) => svc.request(method, path, { token: adminToken, body });
  const masterHits = async () => {
    const text = (await svc.request('GET', '/metrics', { headers: { 'x-internal-token': internalToken } })).text;
    return Number(/^master_identity_cache_hits_total (\d+)$/m.exec(text)?.[1]);
  };

  t.equal((await tokens(masterKey)).status, 200);
  const hits = await masterHits();
  t.equal((await tokens(masterKey)).json.total, 1, 'second request');
  t.equal(await masterHits(), hits + 1, 'answered from the cache');

  // The view changes without an identity change: whoami reads it afresh.
  t.equal((await whoMaster(masterKey)).json.child_keys, 1);
  t.equal((await svc.request('POST', '/v1/tokens', { token: masterKey, body: { name: 'two' } })).status, 201);
  t.equal((await whoMaster(masterKey)).json.child_keys, 2, 'whoami counts the key issued since');

  t.equal((await admin('PUT', `/admin/masters/${masterId}`, { name: 'renamed' })).status, 200);
  t.equal((await whoMaster(masterKey)).json.name, 'renamed', 'update');

  t.equal((await admin('POST', `/admin/masters/${masterId}/freeze`)).status, 200);
  t.equal((await whoMaster(masterKey)).status, 403, 'frozen');
  t.equal((await admin('POST', `/admin/masters/${masterId}/unfreeze`)).status, 200);
  t.equal((await whoMaster(masterKey)).status, 200, 'unfrozen');

  t.equal((await tokens(masterKey)).status, 200);
  const reset = await admin('POST', `/admin/masters/${masterId}/reset-key`);
  t.equal(reset.status, 200);
  t.equal((await tokens(masterKey)).status, 401, 'the old key is refused right after the reset');
  const fresh = reset.json.master_key as string;
  t.equal((await tokens(fresh)).status, 200, 'the new key is accepted');
  t.equal((await tokens(fresh)).status, 200);
  t.equal((await admin('DELETE', `/admin/masters/${masterId}`)).status, 200);
  t.equal((await tokens(fresh)).status, 401, 'deleted: refused right after the answer');
});

/** A service with the identity cache on, and a store client standing for another node; null (and a pass) without a shared Redis. */
async function withOtherNode(t: Tap, cacheMs: string): Promise<{ svc: TestService; other: SharedStore } | null> {
  const svc = await startTestService({ env: { SVC_IDENTITY_CACHE_MS: cacheMs } });
  t.teardown(() => svc.stop());
  if (!svc.usingRedis) {
    t.pass('skipped: another node needs a shared Redis');
    return null;
  }
  const other = await openStore({ url: svc.config.redisUrl });
  t.teardown(() => other.close());
  return { svc, other };
}

t.test("whoami through the cache sees another node's change when it is announced, and any change after SVC_IDENTITY_CACHE_MS", async (t) => {
  const nodes = await withOtherNode(t, '60000');
  if (!nodes) return;
  const { svc, other } = nodes;
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

t.test('a stats flush drops from the identity cache only the keys it wrote', async (t) => {
  const svc = await startTestService({ env: { SVC_IDENTITY_CACHE_MS: '600000' } });
  t.teardown(() => svc.stop());
  const { masterId, secret: a } = await keyOf(svc);
  const b = (await svc.request('POST', `/admin/masters/${masterId}/keys`, { token: adminToken, body: { name: 'two' } })).json.key_secret as string;
  await onlyTouchedKeyDropped(t, svc, a, b, async (attempt) => {
    const flush = await svc.request('POST', '/internal/stats/flush', {
      headers: { 'x-internal-token': internalToken },
      body: { keys: [{ token_hash: sha256Hex(a), requests: 1, tokens: 42, last_accessed_at: Math.floor(Date.now() / 1000) }] },
    });
    t.same(flush.json, { accepted_keys: 1, accepted_upstream_keys: 0 });
    return 42 * attempt;
  });
});

t.test("another node's quota change drops only the keys it names", async (t) => {
  const nodes = await withOtherNode(t, '600000');
  if (!nodes) return;
  const { svc, other } = nodes;
  const { masterId, keyId, secret: a } = await keyOf(svc);
  const b = (await svc.request('POST', `/admin/masters/${masterId}/keys`, { token: adminToken, body: { name: 'two' } })).json.key_secret as string;
  await onlyTouchedKeyDropped(t, svc, a, b, async (attempt) => {
    // Written and announced as another node's relay does (docs/store-layout.md).
    await other.apply([quotaUsedOp(sha256Hex(a), 7 * attempt), configChange('quota', Date.now(), [keyId])]);
    return 7 * attempt;
  });
});
