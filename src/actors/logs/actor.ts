/**
 * The logs actor, on the main thread beside chDB: it takes POST /logs bodies
 * (parse, validate, id, row), hands rows to the table writer
 * (storage/clickhouse/write), serves log pages and deletions, the pipeline's
 * status and its dead letters, and enforces retention. Feature flags and model
 * prices are held here so the ingestion path never waits for them: each record
 * is priced when it is accepted (docs/spend.md), and its cost travels in its row.
 */
import { join } from 'node:path';
import { handlerFor, type ActorDefinition } from '../runtime/actor.js';
import type { MainContext } from '../main-context.js';
import type { RawInput } from '../../contract/input.js';
import { logs } from './handles.js';
import type { InputFrom } from '../../contract/handle.js';

/** What a routed handler receives, named (inferred inline, the lists' query is too deep for tsc). */
type In<K extends keyof typeof logs> = InputFrom<(typeof logs)[K]['input']>;
import { AppError, badRequest, notFound, unavailable } from '../../errors.js';
import { clampLimit } from '../../contract/page.js';
import { configChannel } from '../../storage/redis/layout.js';
import { exportLogsCsv } from '../../storage/clickhouse/log-export.js';
import { LOG_DAYS_PER_INSERT } from '../../storage/clickhouse/client.js';
import { cursorOf, deleteLogs, listLogs, maxIdOfNode, newestCreatedAt, parseCursor, type LogCursor, type LogFilter } from '../../storage/clickhouse/logs.js';
import { LOG_COLUMNS, partitionOfRow, toRow, type LogRow } from '../../storage/clickhouse/logs-table.js';
import { TableWriter } from '../../storage/clickhouse/write/writer.js';
import { dedupLogIds, replayedBatch, restoreMissingLogs, widenSpan } from '../../storage/clickhouse/log-replay.js';
import { repairRollups, type ReplaySpan } from '../../storage/clickhouse/rollup-check.js';
import { WalWriteError } from '../../storage/clickhouse/write/wal.js';
import { backfillCost } from '../../storage/clickhouse/spend.js';
import { flagDefaults, type Flags } from '../features/flags.js';
import { costOf, priceMap, type PriceMap, type PriceRow } from '../spend/prices.js';
import { picoText } from '../../contract/money.js';
import { IdGenerator } from './ids.js';
import { Latest } from './latest.js';
import { parseLogBody } from './parse.js';
import { chTimeCached, createdAtOf, type LogRecord } from './record.js';
import { enforceRetention, retentionChanged, type RetentionResult } from './retention.js';
import type { LogGenerations } from './generations.js';
import { logView, rfc3339 } from './view.js';
import { deadLetterView, pipelineStatus, type PipelineStatus } from './pipeline.js';

/**
 * Receives the error-looking records of each accepted request (the log-error
 * webhook plugs in here), each with its stored `id` and `created_at` added.
 */
export type IngestObserver = (errors: LogRecord[], accepted: number) => void;

export interface LogsActor extends ActorDefinition<MainContext> {
  observers: IngestObserver[];
  writer(): TableWriter;
  flags(): Flags;
}

export { logView };

/** The disk refused the write-ahead file: the records are not acknowledged (in `fsync` mode they may still be stored). */
const walRefused = (): never => {
  throw unavailable('the log write-ahead file could not be written; retry later', 5);
};

export interface LogsOptions {
  /** Told about every ClickHouse insert: records and seconds (metrics). */
  onInsert?: (records: number, seconds: number) => void;
  /** Raised after every change to the stored logs (inserts, deletions, retention), for the statistics cache. */
  generations?: LogGenerations;
}

export function logsActor(options: LogsOptions = {}): LogsActor {
  let invalid = 0;
  let writer: TableWriter | undefined;
  /** What the batches replayed from the write-ahead file touched, until the rollups are checked over it. */
  let replayed: ReplaySpan | null = null;
  let ids: IdGenerator;
  const flags = new Latest<Flags>({ ...flagDefaults }, 'feature flags');
  const prices = new Latest<PriceMap>(new Map(), 'model prices');
  let unpriced = 0;
  let flagTimer: NodeJS.Timeout | undefined;
  let retentionTimer: NodeJS.Timeout | undefined;
  let unsubscribe: (() => Promise<void>) | undefined;
  const observers: IngestObserver[] = [];

  const readFlags = (ctx: MainContext) => () => ctx.ask<Flags>('features', 'get');
  const readPrices = (ctx: MainContext) => async () => priceMap(await ctx.ask<PriceRow[]>('models', 'prices'));
  const refreshFlags = (ctx: MainContext) => flags.refresh(readFlags(ctx), ctx.log);
  const refreshPrices = (ctx: MainContext) => prices.refresh(readPrices(ctx), ctx.log);

  const stamp = chTimeCached();
  /** A routed handler, its input typed by its handle (./handles.ts). */
  const on = handlerFor<MainContext>();

  const filterOf = (q: Record<string, unknown>, masterId?: number): LogFilter => {
    const f: LogFilter = {
      master_id: q.master_id as number | undefined,
      key_id: q.key_id as number | undefined,
      model: q.model as string | undefined,
      group: q.group as string | undefined,
      status_code: q.status_code as number | undefined,
      since: q.since as number | undefined,
      until: q.until as number | undefined,
      error_only: q.error_only as boolean | undefined,
    };
    if (f.since !== undefined && f.until !== undefined && f.until <= f.since) {
      throw badRequest('until must be after since', { until: 'must be greater than since' });
    }
    if (masterId !== undefined) f.master_id = masterId; // a tenant sees its own records only
    return f;
  };

  return {
    name: 'logs',
    placement: 'main',
    // `fsync` ingests hold their slot until the write-ahead file's fdatasync (a few ms): room for every request in flight.
    concurrency: 4096,
    observers,
    writer: () => writer!,
    flags: () => flags.value,
    handlers: {
      ingest: ({ body, contentType }: RawInput, ctx) => {
        let parsed: ReturnType<typeof parseLogBody>;
        try {
          parsed = parseLogBody(body, contentType);
        } catch (err) {
          invalid += Number((err as AppError).data?.invalid ?? 1);
          throw err;
        }
        const { records, batch } = parsed;
        const now = ctx.now();
        const ingestedAt = stamp(now);
        const keepBody = flags.value.log_request_body_enabled;
        const priced = prices.value;
        const lines: string[] = new Array(records.length);
        let errors: LogRecord[] | undefined;
        let id = 0;
        for (let i = 0; i < records.length; i++) {
          const rec = records[i]!;
          id = ids.next();
          const createdAt = createdAtOf(rec, ingestedAt);
          if (rec.status_code >= 400 || rec.error_message) {
            rec.id = id;
            rec.created_at = createdAt;
            (errors ??= []).push(rec);
          }
          const cost = costOf(priced, rec.model, rec.tokens_in, rec.tokens_out);
          if (cost.unpriced) unpriced++;
          lines[i] = JSON.stringify(toRow(rec, id, createdAt, keepBody, cost));
        }
        // One record (the data plane's usual request) allocates no array of masters.
        let accepted: boolean;
        try {
          accepted =
            lines.length === 1
              ? writer!.accept(lines[0]!, 1, records[0]!.master_id)
              : writer!.accept(lines.join('\n'), records.length, records.map((r) => r.master_id));
        } catch (err) {
          if (err instanceof WalWriteError) walRefused();
          throw err;
        }
        if (!accepted) {
          throw unavailable('log storage is backed up; retry later', 5);
        }
        if (errors && observers.length) for (const o of observers) o(errors, records.length);
        const reply = batch ? { accepted: records.length } : { accepted: 1, id };
        // `durable`: the records are in the write-ahead file already (accept wrote them); `fsync` also waits for the
        // fdatasync covering them (docs/log-pipeline.md, "Acknowledgement").
        const synced = writer!.synced();
        return synced ? synced.then(() => reply, walRefused) : reply;
      },

      list: on(logs.list, async ({ query: q, principal }: In<'list'>, ctx) => {
        const masterId = principal.type === 'master' ? principal.id : undefined;
        const limit = clampLimit(q.limit);
        const offset = q.offset ?? 0;
        let cursor: LogCursor | undefined;
        if (q.cursor !== undefined) {
          cursor = parseCursor(q.cursor) ?? undefined;
          if (!cursor) throw badRequest('cursor must be a next_cursor of this list', { cursor: 'not a cursor of this list' });
        }
        const { items, total } = await listLogs(ctx.clickhouse, filterOf(q, masterId), limit, offset, cursor);
        // A full page may have a next one; a short page is the last.
        const next_cursor = items.length === limit ? cursorOf(items[items.length - 1]!) : null;
        return { items: items.map(logView), total, limit, offset, next_cursor };
      }),

      /** The list's records as CSV bytes, every one of them (a main-thread caller reads the iterator; it must finish or return() it). */
      export: on(logs.export, async ({ query, principal }: In<'export'>, ctx) => {
        const masterId = principal.type === 'master' ? principal.id : undefined;
        return exportLogsCsv(ctx.clickhouse, filterOf(query as Record<string, unknown>, masterId));
      }),

      delete: on(logs.delete, async ({ query }: In<'delete'>, ctx) => {
        const q = query as Record<string, unknown>;
        const before = Date.parse(q.before as string);
        if (Number.isNaN(before)) throw badRequest('before must be an RFC 3339 time', { before: 'must be an RFC 3339 time' });
        // Records still buffered would escape the deletion: write them first.
        await writer!.flushNow();
        try {
          const deleted = await deleteLogs(ctx.clickhouse, {
            before: new Date(before),
            master_id: q.master_id as number | undefined,
            key_id: q.key_id as number | undefined,
            model: q.model as string | undefined,
            status_code: q.status_code as number | undefined,
          });
          return { deleted };
        } finally {
          options.generations?.changed(null); // even a failed deletion may have removed some
        }
      }),

      /** Enforces log_retention_days and log_max_records now; the timer calls it too. */
      retention: async (_: unknown, ctx) => {
        await refreshFlags(ctx);
        await writer!.flushNow();
        let result: RetentionResult | undefined;
        try {
          result = await enforceRetention(ctx.clickhouse, flags.value, ctx.now(), ctx.log);
          return result;
        } finally {
          // A failed pass may have removed some rows too.
          if (!result || retentionChanged(result)) options.generations?.changed(null);
        }
      },

      /**
       * The flags as a change committed on this node left them (in force here before its answer). Handed over, not
       * re-read: the features actor that sends them holds a worker thread while it waits. Any read started before
       * is discarded; the timer's next read settles two changes racing on this node.
       */
      setFlags: (next: Flags) => flags.set(next),

      /** The prices as a model change committed on this node left them (in force here before its answer), as setFlags. */
      setPrices: (rows: PriceRow[]) => prices.set(priceMap(rows)),

      /** The prices in force here (name -> input and output price, decimal text). */
      prices: () =>
        Object.fromEntries([...prices.value].map(([name, p]) => [name, { input: picoText(p.input), output: picoText(p.output) }])),

      /**
       * Prices stored rows from the current prices (POST /admin/logs/cost-backfill, docs/spend.md): rows still
       * buffered are written first, so the slice is what was accepted before the call.
       */
      costBackfill: on(logs.costBackfill, async ({ body }: In<'costBackfill'>, ctx) => {
        if (body.since !== undefined && body.until !== undefined && body.until <= body.since) {
          throw badRequest('until must be after since', { until: 'must be greater than since' });
        }
        await writer!.flushNow();
        const rows = await ctx.ask<PriceRow[]>('models', 'prices');
        const map = priceMap(rows);
        const prices = [...map].map(([name, p]) => ({ name, input: picoText(p.input), output: picoText(p.output) }));
        try {
          return await backfillCost(ctx.clickhouse, prices, { since: body.since, until: body.until, onlyZero: body.only_zero ?? true }, ctx.now());
        } finally {
          options.generations?.changed(null);
        }
      }),

      flush: () => writer!.flushNow(),
      state: () => ({
        ...writer!.stats,
        ...writer!.backlogState,
        deadLetterRecords: writer!.deadLetters.records,
        degraded: writer!.degraded,
        // seconds; 0 in `memory` mode (no write-ahead file)
        walSyncLagSeconds: (writer!.walSyncLag?.lastMs ?? 0) / 1000,
        walSyncLagMaxSeconds: (writer!.walSyncLag?.maxMs ?? 0) / 1000,
        invalid,
        unpriced,
        flags: flags.value,
      }),

      /** What the console shows of the pipeline; newest_stored_at is null while ClickHouse does not answer. */
      pipeline: on(logs.pipeline, async (_: In<'pipeline'>, ctx): Promise<PipelineStatus> => {
        const newest = await newestCreatedAt(ctx.clickhouse).catch(() => null);
        return pipelineStatus(writer!, newest === null ? null : rfc3339(newest));
      }),

      deadLetters: on(logs.deadLetters, async () => {
        const items = await Promise.all(writer!.deadLetters.list().map((l) => deadLetterView(writer!.deadLetters, l)));
        return { items, total: items.length, records: items.reduce((n, l) => n + l.records, 0) };
      }),

      replayDeadLetter: on(logs.replayDeadLetter, async ({ params }: In<'replayDeadLetter'>) => {
        const r = await writer!.replay(params.id);
        if (!r) throw notFound('dead letter', { id: params.id });
        if (r.error?.kind === 'outage') {
          throw unavailable(`ClickHouse could not take the rows (${String(r.error.code ?? 'no code')}); the dead letter is kept`, 5);
        }
        return { id: r.id, stored: r.stored, refused: r.refused, remains: r.refused > 0, error: r.error && { code: r.error.code, message: r.error.message } };
      }),

      deleteDeadLetter: on(logs.deleteDeadLetter, async ({ params }: In<'deleteDeadLetter'>) => {
        if (!(await writer!.deadLetters.remove(params.id))) throw notFound('dead letter', { id: params.id });
        return { id: params.id, deleted: true };
      }),
    },

    async start(ctx) {
      ids = new IdGenerator(ctx.config.nodeId, () => ctx.now());
      ids.resumeAfter(await maxIdOfNode(ctx.clickhouse, ctx.config.nodeId));
      writer = new TableWriter(
        {
          table: 'logs',
          columns: LOG_COLUMNS,
          partitionOf: partitionOfRow,
          maxPartitions: LOG_DAYS_PER_INSERT,
          deadLetterDir: join(ctx.config.dataDir, 'dead-letters'),
          batchRecords: ctx.config.logBatchRecords,
          batchBytes: ctx.config.logBatchBytes,
          flushMs: ctx.config.logFlushMs,
          memoryBytes: ctx.config.logMemoryBytes,
          spoolBytes: ctx.config.logSpoolBytes,
          stopInsertMs: ctx.config.logShutdownInsertMs,
          spoolDir: join(ctx.config.dataDir, 'log-spool'),
          walDir: join(ctx.config.dataDir, 'log-wal'),
          ack: ctx.config.logAck,
          afterReplay: async (rows, columns) => {
            const batch = columns && replayedBatch(rows, columns);
            if (!batch) return;
            const removed = await dedupLogIds(ctx.clickhouse, batch);
            if (removed > 0) ctx.log.warn({ removed }, 'a replayed log batch had reached ClickHouse before the crash; its second copies were removed');
            const restored = await restoreMissingLogs(ctx.clickhouse, batch, columns);
            if (restored > 0) ctx.log.warn({ restored }, 'a replayed log batch was skipped as already stored, but its rows were not: they were inserted again');
            replayed = widenSpan(replayed, batch);
          },
          afterRecovery: async () => {
            if (!replayed) return;
            const rebuilt = await repairRollups(ctx.clickhouse, replayed);
            if (rebuilt.length > 0) ctx.log.warn({ rebuilt }, 'rollups missed part of a replayed log batch; their buckets were rebuilt');
            replayed = null;
          },
        },
        ctx.clickhouse,
        ctx.log,
      );
      writer.stats.onInsert = options.onInsert;
      const generations = options.generations;
      if (generations) writer.onStored = (masters) => generations.changed(masters);
      writer.start();
      await Promise.all([refreshFlags(ctx), refreshPrices(ctx)]);
      // Another node's flag or model change arrives on the config channel (a model change is a routing write);
      // the timer covers a missed message.
      unsubscribe = await ctx.store
        .subscribe(configChannel, (m) => {
          if (m.includes('"features"')) void refreshFlags(ctx);
          if (m.includes('"routing') || m.includes('"snapshot"')) void refreshPrices(ctx);
        })
        .catch(() => undefined);
      flagTimer = setInterval(() => {
        void flags.poll(readFlags(ctx), ctx.log);
        void prices.poll(readPrices(ctx), ctx.log);
      }, ctx.config.configPollMs);
      flagTimer.unref();
      retentionTimer = setInterval(() => {
        ctx.ask('logs', 'retention').catch((err: unknown) => ctx.log.error({ err }, 'log retention failed'));
      }, ctx.config.retentionIntervalMs);
      retentionTimer.unref();
    },

    async stop() {
      clearInterval(flagTimer);
      clearInterval(retentionTimer);
      await unsubscribe?.().catch(() => undefined);
      await writer?.stop();
    },
  };
}
