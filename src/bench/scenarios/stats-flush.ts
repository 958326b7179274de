/**
 * stats-flush: POST /internal/stats/flush with the counters of 1,000 real
 * keys per request (a master and 1,000 child keys are issued through the
 * admin API first), beside the same counter updates applied straight to the
 * stores: the tenancy storage function (applyKeyUsage) on an embedded
 * Postgres of the bench's own, then the quota mirror on an in-process shared
 * store, bypassing HTTP, validation, the actor hop and the outbox, in paired
 * rounds with the service (harness/rounds.ts). A second direct figure adds
 * the outbox round trip the service makes (enqueue in the transaction, then
 * read, apply and delete as the relay does), to tell the cost of that design
 * from the cost of the request path. Skipped cleanly when the endpoint or key
 * issuing is not there.
 */
import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../../contract/hash.js';
import { cpuMicros, describeCpu, withCpu } from '../harness/cpu.js';
import { withDirectPostgres } from '../harness/direct-postgres.js';
import { bearer, call, type Answer } from '../harness/http.js';
import { runLoad, type LoadOptions } from '../harness/load.js';
import { okResult, skippedResult, target, type ScenarioResult } from '../harness/results.js';
import { sampleRss } from '../harness/rss.js';
import { benchAdminToken, benchInternalToken, startService, type BenchService } from '../harness/service.js';
import { median, pairedRounds } from '../harness/rounds.js';
import type { ScenarioOptions } from './options.js';
import { mb, pct, printTable } from '../harness/table.js';
import { flushBodies, keyCounters, type KeyCounter } from '../fixtures/usage-bodies.js';
import { openStore } from '../../storage/redis/open.js';
import { configChange } from '../../storage/redis/layout.js';

const name = 'stats-flush';
const keyCount = 1000;
const variants = 8;
/** Flushes in flight at once, as from a few data-plane nodes. */
const connections = 4;
/**
 * The direct path runs one transaction at a time: the embedded Postgres runs
 * one at a time anyway, and concurrent connections trip its socket
 * multiplexing ("unnamed prepared statement does not exist", see
 * docs/performance.md).
 */
const directLoops = 1;

interface Modules {
  storage: typeof import('../../storage/postgres/tenancy.js');
  metadata: typeof import('../../storage/redis/writers/tenancy.js');
  outbox: typeof import('../../storage/postgres/outbox.js');
}

/** The tenancy domain's modules (written concurrently by another engineer), if they exist yet. */
async function tenancyModules(): Promise<Modules | null> {
  try {
    const storage = await import('../../storage/postgres/tenancy.js');
    const metadata = await import('../../storage/redis/writers/tenancy.js');
    const outbox = await import('../../storage/postgres/outbox.js');
    const needed = [storage.applyKeyUsage, storage.insertMaster, storage.insertKey, metadata.quotaUsedOp, outbox.enqueueChange];
    return needed.every((f) => typeof f === 'function') ? { storage, metadata, outbox } : null;
  } catch {
    return null;
  }
}

/**
 * Issues `count` child keys through the admin API, one at a time; their token
 * hashes (SHA-256 of the secret). A 5xx, a dropped connection or an answer
 * that does not come within 10 s is retried (embedded Postgres loses a
 * statement now and then under concurrent connections: docs/performance.md);
 * at worst a spare key is issued.
 */
async function issueKeys(base: string, masterId: number, count: number): Promise<{ hashes: string[]; retries: number } | null> {
  const hashes: string[] = [];
  let retries = 0;
  while (hashes.length < count) {
    let r: Answer | null = null;
    for (let attempt = 1; !r; attempt++) {
      try {
        const a = await call(base, 'POST', `/admin/masters/${masterId}/keys`, { body: {}, headers: bearer(benchAdminToken), timeoutMs: 10_000 });
        if (a.status < 500 || attempt === 5) r = a;
      } catch (err) {
        if (attempt === 5) throw err;
      }
      if (!r) retries++;
    }
    if (r.status === 404) return null;
    if (r.status !== 201) throw new Error(`issuing a key answered ${r.status}: ${JSON.stringify(r.json)}`);
    hashes.push(sha256Hex((r.json as { key_secret: string }).key_secret));
  }
  return { hashes, retries };
}

interface Prepared {
  svc: BenchService;
  load: LoadOptions;
}

/** Boots the service, issues a master and its keys, checks one flush; a string when an endpoint is missing. */
async function prepareService(seconds: number, nodeArgs?: string[]): Promise<Prepared | string> {
  const svc = await startService({}, nodeArgs);
  const skip = async (why: string): Promise<string> => {
    await svc.stop();
    return why;
  };
  try {
    const internal = { 'x-internal-token': benchInternalToken };
    const probe = await call(svc.base, 'POST', '/internal/stats/flush', { body: { keys: [], upstream_keys: [] }, headers: internal });
    if (probe.status === 404) return await skip('endpoint not available (POST /internal/stats/flush answers 404)');
    if (probe.status !== 200) throw new Error(`an empty flush answered ${probe.status}: ${JSON.stringify(probe.json)}`);
    const master = await call(svc.base, 'POST', '/admin/masters', {
      body: { name: 'bench', group: 'default', max_child_keys: 2 * keyCount }, // room for spares issued by retries
      headers: bearer(benchAdminToken),
    });
    if (master.status === 404) return await skip('endpoint not available (POST /admin/masters answers 404)');
    if (master.status !== 201) throw new Error(`creating a master answered ${master.status}: ${JSON.stringify(master.json)}`);
    const issued = await issueKeys(svc.base, (master.json as { id: number }).id, keyCount);
    if (!issued) return await skip('endpoint not available (POST /admin/masters/{id}/keys answers 404)');
    if (issued.retries) process.stderr.write(`stats-flush: ${issued.retries} key issuances were retried\n`);

    const bodies = flushBodies(issued.hashes, variants, Math.floor(Date.now() / 1000));
    const first = await call(svc.base, 'POST', '/internal/stats/flush', { body: JSON.parse(bodies[0]!.toString()), headers: internal });
    if (first.status !== 200 || (first.json as { accepted_keys: number }).accepted_keys !== keyCount) {
      throw new Error(`a flush of ${keyCount} real keys answered ${first.status}: ${JSON.stringify(first.json)}`);
    }
    const load: LoadOptions = {
      base: svc.base,
      path: '/internal/stats/flush',
      headers: { 'content-type': 'application/json', ...internal },
      bodies,
      connections,
      pipelining: 1,
      seconds,
    };
    await runLoad({ ...load, seconds: 2 });
    return { svc, load };
  } catch (err) {
    await svc.stop().catch(() => undefined);
    throw err;
  }
}

type Direct = (withOutbox: boolean, seconds: number) => Promise<number>;

/**
 * Seeds a master and its keys in the bench's own embedded Postgres and hands
 * `work` a measurer: keys per second applied straight to the stores by
 * `directLoops` loops for `seconds`, optionally with the outbox round trip.
 */
async function withDirect<T>(mods: Modules, work: (measure: Direct) => Promise<T>): Promise<T> {
  const { storage, metadata, outbox } = mods;
  return withDirectPostgres(async (pool) => {
    const master = await storage.insertMaster(pool, {
      name: 'bench', group: 'default', keyDigest: sha256Hex(randomBytes(16).toString('hex')), keyPrefix: 'mk-benc', maxChildKeys: keyCount, globalQps: 0,
    });
    const hashes: string[] = [];
    for (let i = 0; i < keyCount; i++) {
      const hash = sha256Hex(randomBytes(16).toString('hex'));
      hashes.push(hash);
      await storage.insertKey(pool, {
        masterId: master.id, name: '', tokenHash: hash, keyPrefix: 'sk-benc', issuedBy: 'admin', issuedAtEpoch: master.epoch,
        group: 'default', scopes: '', quotaLimit: -1, quotaResetType: 'never', quotaPeriodStart: null, modelLimitsEnabled: false,
        modelLimits: '', allowIps: '', denyIps: '', defaultNamespace: '', allowedNamespaces: [], status: 'active', expiresAt: null,
      });
    }
    const store = await openStore({});
    const now = Math.floor(Date.now() / 1000);
    const batches: KeyCounter[][] = Array.from({ length: variants }, (_, v) => keyCounters(hashes, v, now));
    let next = 0;
    const apply = async (withOutbox: boolean): Promise<number> => {
      const items = batches[next++ % batches.length]!;
      const at = Date.now();
      if (!withOutbox) {
        const updated = await pool.transaction((tx) => storage.applyKeyUsage(tx, items));
        await store.apply([...updated.map((u) => metadata.quotaUsedOp(u.token_hash, u.quota_used)), configChange('quota', at, updated.map((u) => u.id))]);
        return updated.length;
      }
      const updated = await pool.transaction(async (tx) => {
        const rows = await storage.applyKeyUsage(tx, items);
        await outbox.enqueueChange(tx, 'quota', at, rows.map((u) => metadata.quotaUsedOp(u.token_hash, u.quota_used)), rows.map((u) => u.id), true);
        return rows;
      });
      // What the relay does with those entries.
      const { entries } = await outbox.pendingEntries(pool, 100);
      for (const e of entries) await store.apply(e.ops);
      await outbox.deleteEntries(pool, entries.map((e) => e.id));
      return updated.length;
    };
    const measure: Direct = async (withOutbox, seconds) => {
      const started = performance.now();
      const until = started + seconds * 1000;
      let keys = 0;
      await Promise.all(
        Array.from({ length: directLoops }, async () => {
          while (performance.now() < until) keys += await apply(withOutbox);
        }),
      );
      return keys / ((performance.now() - started) / 1000);
    };
    try {
      return await work(measure);
    } finally {
      await store.close();
    }
  });
}

export async function statsFlush(opts: ScenarioOptions = {}): Promise<ScenarioResult> {
  const seconds = opts.seconds ?? 10;
  const mods = await tenancyModules();
  if (!mods) return skippedResult(name, 'endpoint not available (the tenancy storage functions are missing)');
  const outcome = await withDirect(mods, async (direct) => {
    const prepared = await prepareService(seconds, opts.nodeArgs);
    if (typeof prepared === 'string') return prepared;
    const { svc, load } = prepared;
    try {
      await direct(false, 2); // warm-up
      const rss = sampleRss(svc.pid);
      const paired = await pairedRounds(
        opts.rounds ?? 3,
        () => withCpu(svc.pid, () => runLoad(load)),
        () => direct(false, seconds),
        (sv, ce) => (sv.value.rps * keyCount) / ce,
      );
      const peakRss = rss.stop();
      const withOutbox = await direct(true, seconds);
      return { paired, peakRss, withOutbox, idleRss: svc.idleRss };
    } finally {
      await svc.stop();
    }
  });
  if (typeof outcome === 'string') return skippedResult(name, outcome);
  const { paired, peakRss, withOutbox } = outcome;
  const rounds = paired.rounds.map((r) => ({
    service_keys_per_s: r.service.value.rps * keyCount,
    direct_keys_per_s: r.ceiling,
    ratio: r.ratio,
    p99_ms: r.service.value.latencyMs.p99,
    service_cpu_cores: r.service.server.cores,
    service_cpu_us_per_key: cpuMicros(r.service.server, r.service.value.answered * keyCount),
  }));
  const med = (k: keyof (typeof rounds)[number]): number => median(rounds.map((r) => r[k]));
  const runs = paired.rounds.map((r) => r.service.value);
  const failures = runs.reduce((n, r) => n + r.errors + r.non2xx + r.unanswered, 0);
  const last = paired.rounds[paired.rounds.length - 1]!;

  printTable(`${name}: ${keyCount} keys per flush, ${connections} connections, ${rounds.length} rounds of ${seconds} s`, [
    ['ratio service/direct (median of rounds)', pct(paired.ratio)],
    ['  per round', rounds.map((r) => pct(r.ratio)).join(', ')],
    ['service keys/s, per round', rounds.map((r) => Math.round(r.service_keys_per_s)).join(', ')],
    ['direct keys/s, per round', rounds.map((r) => Math.round(r.direct_keys_per_s)).join(', ')],
    ['direct keys/s incl. outbox round trip (once)', withOutbox],
    ['errors + non-2xx + unanswered', failures],
    ['  statuses per round', runs.map((r) => `${JSON.stringify(r.statuses)} errors ${r.errors} unanswered ${r.unanswered}`).join('; ')],
    ['p99 latency (ms), per round', rounds.map((r) => r.p99_ms).join(', ')],
    ['service CPU us/key (median)', med('service_cpu_us_per_key')],
    ['service CPU, last round', describeCpu(last.service.server)],
    ['service peak RSS during the rounds', mb(peakRss)],
  ]);
  return okResult(
    name,
    { name: 'service keys/s / direct keys/s (median of paired rounds)', value: paired.ratio },
    {
      seconds,
      rounds: rounds.length,
      connections,
      keys_per_flush: keyCount,
      service_keys_per_s: med('service_keys_per_s'),
      direct_keys_per_s: med('direct_keys_per_s'),
      direct_with_outbox_keys_per_s: withOutbox,
      failures,
      // per round: status counts, transport errors, requests never answered
      statuses: JSON.stringify(runs.map((r) => ({ ...r.statuses, errors: r.errors, unanswered: r.unanswered }))),
      p99_ms_median: med('p99_ms'),
      service_cpu_us_per_key: med('service_cpu_us_per_key'),
      service_cpu_threads_last_round: describeCpu(last.service.server, 8),
      service_peak_rss_bytes: peakRss,
      service_idle_rss_bytes: outcome.idleRss,
    },
    [target('ratio >= 50% of the direct ceiling', paired.ratio, 0.5), target('zero errors / non-2xx', failures, 0, true)],
    rounds,
  );
}
