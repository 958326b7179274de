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
import { startupStages, type StartupStages } from './startup-stages.js';
import type { Database } from './storage/postgres/database.js';
import type { ClickHouse } from './storage/clickhouse/client.js';
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
  const stages = startupStages(log);
  const build = loadBuildInfo();
  const clock = options.clock ?? new Clock();
  await stages.stage('probe_port', () => HttpServer.probe(config.host, config.port));
  mkdirSync(config.dataDir, { recursive: true });

  const closers: Array<() => Promise<void>> = [];
  try {
    const { database, clickhouse } = await openStores(config, stages, closers);
    // The worker threads start now and load their actors while the main thread migrates the stores; they open their
    // own Postgres pools on their first task, which comes after the migrations.
    const system = new ActorSystem({
      log,
      clock,
      config,
      databaseUrl: database.url,
      workerActors: Object.keys(workerRegistry),
      registry: new URL('./actors/registry.js', import.meta.url).href,
      threads: config.workers,
    });
    const stopActors = (): Promise<void> => system.stop();
    closers.unshift(stopActors);
    const identityCache = new IdentityCache(config.identityCacheMs);
    const applied = await stages.stage('migrate_postgres', () => migratePostgres(database.pool, root('sql/postgres')));
    if (applied.length) log.info({ applied }, 'postgres migrations applied');
    const store = observeWrites(await stages.stage('open_store', () => openStore({ url: config.redisUrl })), (ops) => identityCache.storeWritten(ops));
    // Closed after the actors stop, not before: stopping, the log writer stores what it still holds and publishes
    // each batch's data generation to the store (other nodes' statistics caches read it).
    closers.splice(closers.indexOf(stopActors) + 1, 0, () => store.close());
    const chApplied = await stages.stage('migrate_clickhouse', () =>
      migrateClickHouse(clickhouse, root('sql/clickhouse'), {
        lock: (fn) => withClickHouseMigrationLock(database.pool, fn),
        onRerun: (file) => log.warn({ file }, 'clickhouse migration was interrupted; rerunning it (its statements are IF NOT EXISTS)'),
      }),
    );
    if (chApplied.length) log.info({ applied: chApplied }, 'clickhouse migrations applied');

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

    // Built before the actors start (it is work for the main thread alone), while the worker threads finish loading.
    const routes = (options.routes ?? allRoutes)(build);
    const http = await stages.stage('build_routes', () => {
      const auth = new Authenticator(config, () => clock.now());
      installTenantAuth(auth, { ...system.messaging, now: () => clock.now() }, identityCache);
      const app: AppContext = { config, log, build, auth, startedAt, now: () => clock.now(), ...system.messaging };
      const server = new HttpServer(routes, app);
      server.observer = metrics.observeRequest;
      return server;
    });
    await stages.stage('start_actors', () => system.start((name, start) => stages.stage(`start_actor:${name}`, start)));
    // Every route's handle is answered by a running actor: a route to nowhere stops the start, not a request.
    await stages.stage('check_routes', async () => checkRouteHandles(routes, await system.messages()));
    const port = await stages.stage('listen', () => http.listen(config.host, config.port));
    stages.done();
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

/**
 * Opens Postgres and ClickHouse in parallel, adding their closers. chDB opens once the embedded Postgres holds the
 * data directory's lock, so a second service on a directory in use fails on that lock without touching chDB's files.
 */
async function openStores(config: Config, stages: StartupStages, closers: Array<() => Promise<void>>): Promise<{ database: Database; clickhouse: ClickHouse }> {
  let locked!: () => void;
  const dirLocked = new Promise<void>((resolve) => (locked = resolve));
  const postgres = stages.stage('open_postgres', () =>
    openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, sharedBuffersMb: config.pgliteSharedBuffersMb, onLocked: locked }),
  );
  const clickhouse = Promise.race([dirLocked, postgres]).then(() =>
    stages.stage('open_clickhouse', () =>
      openClickHouse({
        url: config.clickhouseUrl,
        dataDir: config.dataDir,
        connections: config.chdbConnections,
        dirtyDecayMs: config.chdbDirtyDecayMs,
        commandTimeoutMs: config.clickhouseCommandTimeoutMs,
      }),
    ),
  );
  const [pg, ch] = await Promise.allSettled([postgres, clickhouse]);
  if (pg.status === 'fulfilled') closers.unshift(() => pg.value.close());
  if (ch.status === 'fulfilled') closers.unshift(() => ch.value.close());
  if (pg.status === 'rejected') throw pg.reason;
  if (ch.status === 'rejected') throw ch.reason;
  return { database: pg.value, clickhouse: ch.value };
}
