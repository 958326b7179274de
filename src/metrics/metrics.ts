/**
 * The Prometheus metrics of one service instance (prom-client, own registry).
 * Counters on hot paths are incremented in place; everything that is a state
 * (spool bytes, outbox depth, mailbox depths, store health) is read when
 * /metrics is scraped, so the hot paths pay nothing for it.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { RequestMetrics } from './requests.js';

/** What a scrape reads from the running service. */
export interface ScrapeState {
  logs: {
    accepted: number; stored: number; spooled: number; refused: number; invalid: number; unpriced: number; insertFailures: number;
    insertRefusals: number; insertOutages: number; deadLettered: number; deadLetterBatches: number; deadLetterRecords: number;
    degraded: boolean; spoolBytes: number; memoryBytes: number; pendingRecords: number; walSyncLagSeconds: number; walSyncLagMaxSeconds: number;
  };
  outbox: { pending: number; dead: number; retrying: number; oldestPendingAgeSeconds: number; delivered_since_start: number; failures_since_start: number };
  mailboxes: Record<string, number>;
  health: { database: boolean; store: boolean; clickhouse: boolean; logPipeline: boolean };
  workerFailures: number;
  identityCache: { hits: number; misses: number; masterHits: number; masterMisses: number; cleared: number; narrowed: number; entries: number; masterEntries: number };
}

export class Metrics {
  readonly registry = new Registry();
  private readonly requests: RequestMetrics;
  readonly batchRecords: Histogram;
  readonly insertSeconds: Histogram;
  private readonly statsReads: Counter<'result'>;
  private scrape: (() => Promise<ScrapeState>) | null = null;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 10 });
    this.requests = new RequestMetrics(this.registry);
    this.batchRecords = new Histogram({
      name: 'log_writer_batch_records',
      help: 'Records per ClickHouse insert',
      buckets: [1, 10, 100, 1000, 5000, 10000, 20000, 50000, 100000],
      registers,
    });
    this.insertSeconds = new Histogram({
      name: 'clickhouse_insert_seconds',
      help: 'Latency of log batch inserts into ClickHouse',
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });

    this.statsReads = new Counter({
      name: 'stats_cache_reads_total',
      help: 'Statistics reads, by result: hit (served from the cache or a shared read in flight) or miss (sent to ClickHouse)',
      labelNames: ['result'],
      registers,
    });
    this.statsReads.inc({ result: 'hit' }, 0);
    this.statsReads.inc({ result: 'miss' }, 0);

    const state = (): Promise<ScrapeState> => {
      if (!this.scrape) throw new Error('metrics are not wired to the service');
      return this.scrape();
    };
    // One scrape reads the service state once; every gauge below takes its value from that read.
    let current: Promise<ScrapeState> | null = null;
    const read = (): Promise<ScrapeState> => (current ??= state().finally(() => setImmediate(() => (current = null))));
    const gauge = (name: string, help: string, value: (s: ScrapeState) => number): void => {
      new Gauge({ name, help, registers, async collect() { this.set(value(await read())); } });
    };
    // Counters kept by their owners as plain numbers: the scrape adds what they grew by.
    const counter = (name: string, help: string, value: (s: ScrapeState) => number, labels?: Record<string, string>, shared?: Counter<string>): Counter<string> => {
      let seen = 0;
      const c = shared ?? new Counter({ name, help, labelNames: labels ? Object.keys(labels) : [], registers });
      if (labels) c.inc(labels, 0); // the series exists from the start, at 0
      const previous = (c as unknown as { collect?: () => Promise<void> }).collect;
      (c as unknown as { collect: () => Promise<void> }).collect = async () => {
        await previous?.call(c);
        const v = value(await read());
        if (v > seen) {
          if (labels) c.inc(labels, v - seen);
          else c.inc(v - seen);
          seen = v;
        }
      };
      return c;
    };
    counter('logs_accepted_total', 'Log records accepted by POST /logs', (s) => s.logs.accepted);
    counter('logs_stored_total', 'Log records written to ClickHouse', (s) => s.logs.stored);
    counter('logs_spooled_total', 'Log records written to the disk spool', (s) => s.logs.spooled);
    counter('logs_unpriced_total', 'Log records accepted whose model had no price in the registry (stored with cost 0; docs/spend.md)', (s) => s.logs.unpriced);
    const rejected = counter('logs_rejected_total', 'Log records refused, by reason: invalid (400) or backpressure (503)', (s) => s.logs.invalid, { reason: 'invalid' });
    counter('logs_rejected_total', '', (s) => s.logs.refused, { reason: 'backpressure' }, rejected);
    counter('log_insert_failures_total', 'Failed ClickHouse inserts, refusals and outages together', (s) => s.logs.insertFailures);
    const insertErrors = counter(
      'log_insert_errors_total',
      'Failed ClickHouse inserts by kind: refusal (data error: rows isolated, refused ones dead-lettered) or outage (retried)',
      (s) => s.logs.insertRefusals,
      { kind: 'refusal' },
    );
    counter('log_insert_errors_total', '', (s) => s.logs.insertOutages, { kind: 'outage' }, insertErrors);
    counter('logs_dead_lettered_total', 'Log records ClickHouse refused, moved to the dead letters', (s) => s.logs.deadLettered);
    counter('log_dead_letter_batches_total', 'Dead letters written (the refused rows of one batch with one error code each)', (s) => s.logs.deadLetterBatches);
    gauge('log_dead_letter_records', 'Records in the dead letters now (until replayed or deleted)', (s) => s.logs.deadLetterRecords);
    gauge('log_pipeline_degraded', 'The log pipeline is degraded (1: inserts failing or dead letters waiting) or not (0)', (s) => Number(s.logs.degraded));
    gauge('log_spool_bytes', 'Bytes waiting in the disk spool', (s) => s.logs.spoolBytes);
    gauge('log_buffer_bytes', 'Bytes of accepted records waiting in memory', (s) => s.logs.memoryBytes);
    gauge('log_pending_records', 'Accepted records not yet in ClickHouse', (s) => s.logs.pendingRecords);
    gauge('log_wal_sync_lag_seconds', 'How long the lines of the last write-ahead fdatasync round waited for it: in durable mode, what a power loss could take of what was acknowledged', (s) => s.logs.walSyncLagSeconds);
    gauge('log_wal_sync_lag_max_seconds', 'The largest write-ahead fdatasync wait since start (see log_wal_sync_lag_seconds)', (s) => s.logs.walSyncLagMaxSeconds);
    gauge('outbox_depth', 'Store changes waiting in the outbox', (s) => s.outbox.pending);
    gauge('outbox_dead', 'Outbox entries parked after too many rejections', (s) => s.outbox.dead);
    gauge('outbox_retrying', 'Outbox entries that failed at least once', (s) => s.outbox.retrying);
    gauge('outbox_lag_seconds', 'Age of the oldest undelivered store change', (s) => s.outbox.oldestPendingAgeSeconds);
    counter('outbox_delivered_total', 'Outbox entries delivered by this instance', (s) => s.outbox.delivered_since_start);
    counter('outbox_retries_total', 'Failed outbox deliveries by this instance (each is retried)', (s) => s.outbox.failures_since_start);
    gauge('store_up', 'The shared store answers (1) or not (0)', (s) => Number(s.health.store));
    gauge('database_up', 'Postgres answers (1) or not (0)', (s) => Number(s.health.database));
    gauge('clickhouse_up', 'ClickHouse answers (1) or not (0)', (s) => Number(s.health.clickhouse));
    counter('identity_cache_hits_total', 'Child-key authentications answered from the identity cache', (s) => s.identityCache.hits);
    counter('identity_cache_misses_total', 'Child-key authentications that read the store (not cached, or too old)', (s) => s.identityCache.misses);
    const announced = counter(
      'identity_cache_invalidations_total',
      'Tenancy announcements from the config channel, by effect: all (cache emptied) or keys (only the keys named dropped)',
      (s) => s.identityCache.cleared,
      { scope: 'all' },
    );
    counter('identity_cache_invalidations_total', '', (s) => s.identityCache.narrowed, { scope: 'keys' }, announced);
    gauge('identity_cache_entries', 'Child-key identities held by the identity cache', (s) => s.identityCache.entries);
    counter('master_identity_cache_hits_total', 'Master-key authentications answered from the identity cache', (s) => s.identityCache.masterHits);
    counter('master_identity_cache_misses_total', 'Master-key authentications that read Postgres (not cached, or too old)', (s) => s.identityCache.masterMisses);
    gauge('master_identity_cache_entries', 'Master-key identities held by the identity cache', (s) => s.identityCache.masterEntries);
    counter('actor_worker_failures_total', 'Worker threads that died and were replaced', (s) => s.workerFailures);
    new Gauge({
      name: 'actor_mailbox_depth',
      help: 'Messages waiting or running per main-thread actor (workers: queued pool tasks)',
      labelNames: ['actor'],
      registers,
      async collect() {
        this.reset();
        for (const [actor, depth] of Object.entries((await read()).mailboxes)) this.set({ actor }, depth);
      },
    });
  }

  /** Connects the gauges to the running service. */
  wire(scrape: () => Promise<ScrapeState>): void {
    this.scrape = scrape;
  }

  /** The statistics cache's observer. */
  observeStatsRead = (hit: boolean): void => {
    this.statsReads.inc({ result: hit ? 'hit' : 'miss' });
  };

  /** The HTTP server's observer. */
  observeRequest = (route: string, method: string, status: number, seconds: number): void => {
    this.requests.observe(route, method, status, seconds);
  };

  render(): Promise<string> {
    return this.registry.metrics();
  }
}
