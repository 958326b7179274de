/**
 * The floor of ingest-single: the least work that storing a LogRecord in the
 * embedded engine takes, done inline on a bare uWS route with the service's
 * own pieces (the compiled LogRecord validator, the id generator, the row,
 * the log writer's batches, chDB with the service's schema) and none of its
 * framework (router, actors, promises, metrics, error envelope). Where the
 * ceiling tells what the transport allows, the floor tells what any
 * implementation storing into an embedded chDB can reach on this machine.
 *
 * Run as its own process by the bench (harness/floor.ts), with its data in
 * SVC_DATA_DIR. GET /admin/logs answers {"total": <rows in ClickHouse>} so that
 * the bench counts what it stored the way it counts the service's.
 */
import uWS from 'uWebSockets.js';
import type { HttpResponse } from 'uWebSockets.js';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { settingSpecs } from '../../config/settings.js';
import { createLogger } from '../../logger.js';
import { openClickHouse } from '../../storage/clickhouse/open.js';
import { migrateClickHouse } from '../../storage/clickhouse/migrate.js';
import { IdGenerator } from '../../actors/logs/ids.js';
import { costOf, type PriceMap } from '../../actors/spend/prices.js';
import { chTimeCached, createdAtOf, validateLogRecord, type LogRecord } from '../../actors/logs/record.js';
import { LOG_COLUMNS, partitionOfRow, toRow } from '../../storage/clickhouse/logs-table.js';
import { LOG_DAYS_PER_INSERT } from '../../storage/clickhouse/client.js';
import { TableWriter } from '../../storage/clickhouse/write/writer.js';
import { repoPath } from './paths.js';

const dataDir = process.env.SVC_DATA_DIR;
if (!dataDir) throw new Error('SVC_DATA_DIR must name the data directory');

const log = createLogger('warn');
const ch = await openClickHouse({ dataDir });
await migrateClickHouse(ch, repoPath('sql/clickhouse'));
const ids = new IdGenerator(0, Date.now);
/** No registry here: a record is priced (a Map lookup) as the service prices a model the registry does not list. */
const prices: PriceMap = new Map();
// The service's defaults, so that ClickHouse gets the same inserts.
const writer = new TableWriter(
  {
    table: 'logs',
    columns: LOG_COLUMNS,
    partitionOf: partitionOfRow,
    maxPartitions: LOG_DAYS_PER_INSERT,
    deadLetterDir: join(dataDir, 'dead-letters'),
    batchRecords: settingSpecs.logBatchRecords.default,
    batchBytes: settingSpecs.logBatchBytes.default,
    flushMs: settingSpecs.logFlushMs.default,
    memoryBytes: settingSpecs.logMemoryBytes.default,
    spoolBytes: settingSpecs.logSpoolBytes.default,
    spoolDir: join(dataDir, 'log-spool'),
  },
  ch,
  log,
);
writer.start();

const ingestedAt = chTimeCached();

function reply(res: HttpResponse, status: string, requestId: string, body: string): void {
  res.cork(() => res.writeStatus(status).writeHeader('X-Request-ID', requestId).writeHeader('Content-Type', 'application/json').end(body));
}

/** One record in, its row in the writer's batch: its id, 'invalid' for a body that is not one LogRecord, 'full' under backpressure. */
function ingest(body: Buffer): number | 'invalid' | 'full' {
  let rec: unknown;
  try {
    rec = JSON.parse(body.toString('utf8'));
  } catch {
    return 'invalid';
  }
  if (!validateLogRecord(rec)) return 'invalid';
  const record = rec as LogRecord;
  const id = ids.next();
  const row = JSON.stringify(toRow(record, id, createdAtOf(record, ingestedAt(Date.now())), true, costOf(prices, record.model, record.tokens_in, record.tokens_out)));
  return writer.accept(row, 1, record.master_id) ? id : 'full';
}

uWS
  .App()
  .post('/logs', (res, req) => {
    const requestId = req.getHeader('x-request-id') || randomUUID();
    let aborted = false;
    let chunks: Buffer[] = [];
    res.onAborted(() => {
      aborted = true;
    });
    res.onData((chunk, last) => {
      chunks.push(Buffer.copyBytesFrom(new Uint8Array(chunk)));
      if (!last || aborted) return;
      const id = ingest(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
      chunks = [];
      if (id === 'invalid') reply(res, '400 Bad Request', requestId, '{"code":"bad_request","message":"not one valid LogRecord"}');
      else if (id === 'full') reply(res, '503 Service Unavailable', requestId, '{"code":"unavailable","message":"log storage is backed up"}');
      else reply(res, '202 Accepted', requestId, `{"accepted":1,"id":${id}}`);
    });
  })
  .get('/admin/logs', (res) => {
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    ch.query<{ n: string }>('SELECT count() AS n FROM logs').then(
      (rows) => void (aborted || res.cork(() => res.writeHeader('Content-Type', 'application/json').end(`{"total":${Number(rows[0]!.n)}}`))),
      (err: unknown) => void (aborted || res.cork(() => res.writeStatus('500 Internal Server Error').end(String(err)))),
    );
  })
  .listen('127.0.0.1', 0, (socket) => {
    if (!socket) {
      process.stderr.write('cannot listen\n');
      process.exit(1);
    }
    process.stdout.write(`${JSON.stringify({ msg: 'listening', port: uWS.us_socket_local_port(socket) })}\n`);
  });

process.on('SIGTERM', () => {
  void (async () => {
    await writer.stop(); // what was accepted is in ClickHouse (or its spool) before exit
    await ch.close();
    process.exit(0);
  })();
});
