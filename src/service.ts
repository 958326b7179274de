/**
 * Assembles the service: stores, migrations, actors, HTTP. `stop()` takes it
 * down in reverse order: stop accepting, finish requests, drain actors
 * (flushing buffers), close stores.
 */
import { fileURLToPath } from 'node:url';
import { mkdirSync } from 'node:fs';
import type { Config } from './config/settings.js';
import type { Logger } from './logger.js';
import { loadBuildInfo, type BuildInfo } from './version.js';
import { openDatabase } from './storage/postgres/open.js';
import { migratePostgres, withClickHouseMigrationLock } from './storage/postgres/migrate.js';
import { openStore } from './storage/redis/open.js';
import { openClickHouse } from './storage/clickhouse/open.js';
import { migrateClickHouse } from './storage/clickhouse/migrate.js';
import { ActorSystem } from './actors/runtime/system.js';
import { Clock } from './actors/runtime/clock.js';
import type { MainContext } from './actors/main-context.js';
import type { ActorDefinition } from './actors/runtime/actor.js';
import workerRegistry from './actors/registry.js';
import { outboxRelay } from './actors/outbox/relay.js';
import { healthActor } from './actors/health/actor.js';
import { upstreamJobs } from './actors/upstreams/jobs.js';
import { fullSync } from './actors/upstreams/full-sync.js';
import { storeWatch } from './actors/sync/store-watch.js';
import { logsActor } from './actors/logs/actor.js';
import { analyticsActor } from './actors/analytics/actor.js';
import { StatsReadCache } from './actors/analytics/read-cache.js';
import { LogGenerations } from './actors/logs/generations.js';
import { metricsActor } from './actors/metrics/actor.js';
import { auditActor } from './actors/audit/actor.js';
import { Metrics } from './metrics/metrics.js';
import { HttpServer } from './http/server.js';
import { Authenticator } from './http/auth.js';
import { installTenantAuth } from './http/tenant-auth.js';
import { identityActor } from './actors/tenancy/identity.js';
import { IdentityCache } from './actors/tenancy/identity-cache.js';
import { observeWrites } from './storage/redis/observed-store.js';
import { quotaResetJob } from './actors/tenancy/quota-job.js';
import { alertDetector } from './actors/alerts/detector.js';
import { spendJob } from './actors/spend/job.js';
import { alertCleanupJob } from './actors/alerts/cleanup-job.js';
import { logWebhook } from './actors/alerts/webhook.js';
import { allRoutes } from './http/routes/index.js';
import { checkRouteHandles } from './http/route-handles.js';
import type { Route } from './http/route.js';
import type { AppContext } from './http/context.js';

const root = (p: string): string => fileURLToPath(new URL(`../../${p}`, import.meta.url));

export interface ServiceOptions {
  /** A shared clock, so that tests can move time on every thread. */
  clock?: Clock;
  /** The route table (default: allRoutes); tests give another one. */
  routes?: (build: BuildInfo) => Route[];
}

export interface Service {
  port: number;
  build: BuildInfo;
  clock: Clock;
  system: ActorSystem;
  context: MainContext;
  http: HttpServer;
  stop(): Promise<void>;
}

export async function startService(config: Config, log: Logger, options: ServiceOptions = {}): Promise<Service> {
  const startedAt = Date.now();
  const build = loadBuildInfo();
  const clock = options.clock ?? new Clock();
  await HttpServer.probe(config.host, config.port);
  mkdirSync(config.dataDir, { recursive: true });

  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, sharedBuffersMb: config.pgliteSharedBuffersMb });
  const closers: Array<() => Promise<void>> = [() => database.close()];
  try {
    const applied = await migratePostgres(database.pool, root('sql/postgres'));
    if (applied.length) log.info({ applied }, 'postgres migrations applied');
    const identityCache = new IdentityCache(config.identityCacheMs);
    const store = observeWrites(await openStore({ url: config.redisUrl }), (ops) => identityCache.storeWritten(ops));
    closers.unshift(() => store.close());
    const clickhouse = await openClickHouse({ url: config.clickhouseUrl, dataDir: config.dataDir, connections: config.chdbConnections, dirtyDecayMs: config.chdbDirtyDecayMs });
    closers.unshift(() => clickhouse.close());
    const chApplied = await migrateClickHouse(clickhouse, root('sql/clickhouse'), {
      lock: (fn) => withClickHouseMigrationLock(database.pool, fn),
      onRerun: (file) => log.warn({ file }, 'clickhouse migration was interrupted; rerunning it (its statements are IF NOT EXISTS)'),
    });
    if (chApplied.length) log.info({ applied: chApplied }, 'clickhouse migrations applied');

    const system = new ActorSystem({
      log,
      clock,
      config,
      databaseUrl: database.url,
      workerActors: Object.keys(workerRegistry),
      registry: new URL('./actors/registry.js', import.meta.url).href,
      threads: config.workers,
    });
    closers.unshift(() => system.stop());
    const context: MainContext = {
      config,
      log,
      db: database.pool,
      database,
      store,
      clickhouse,
      startedAt,
      now: () => clock.now(),
      ...system.messaging,
    };
    const metrics = new Metrics();
    const generations = new LogGenerations(store, log);
    const statsCache = new StatsReadCache(clickhouse, generations, {
      maxEntries: config.statsCacheEntries,
      maxAgeMs: config.statsCacheMaxAgeMs,
      now: () => clock.now(),
      onRead: metrics.observeStatsRead,
    });
    const logs = logsActor({
      generations,
      onInsert: (records, seconds) => {
        metrics.batchRecords.observe(records);
        metrics.insertSeconds.observe(seconds);
      },
    });
    const webhook = logWebhook();
    logs.observers.push(webhook.observer);
    const mainActors: ActorDefinition<MainContext>[] = [outboxRelay(), healthActor(), auditActor(), upstreamJobs(), fullSync(), storeWatch(), logs, identityActor(identityCache), quotaResetJob(), metricsActor(metrics, system, identityCache), webhook, alertDetector(), alertCleanupJob(), spendJob(), analyticsActor(statsCache)];
    for (const actor of mainActors) system.register(actor, context);
    await system.start();

    const auth = new Authenticator(config, () => clock.now());
    installTenantAuth(auth, { ...system.messaging, now: () => clock.now() }, identityCache);
    const app: AppContext = { config, log, build, auth, startedAt, now: () => clock.now(), ...system.messaging };
    const routes = (options.routes ?? allRoutes)(build);
    checkRouteHandles(routes, await system.messages());
    const http = new HttpServer(routes, app);
    http.observer = metrics.observeRequest;
    const port = await http.listen(config.host, config.port);
    const origin = `http://${config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host}:${port}`;
    log.info(
      { port, version: build.version, database: database.embedded ? 'embedded' : 'postgres', store: store.kind, clickhouse: clickhouse.transport, console: `${origin}/console/`, apiDocs: `${origin}/swagger/index.html` },
      'listening',
    );
    if (!config.adminToken) log.warn('SVC_ADMIN_TOKEN is not set: every /admin request and the console are refused (401); set it to manage the service');

    let stopping: Promise<void> | null = null;
    const stop = (): Promise<void> =>
      (stopping ??= (async () => {
        await http.close();
        for (const close of closers) {
          try {
            await close();
          } catch (err) {
            log.error({ err }, 'error while stopping');
          }
        }
      })());
    return { port, build, clock, system, context, http, stop };
  } catch (err) {
    for (const close of closers) await close().catch(() => undefined);
    throw err;
  }
}
