/**
 * ingest-batch: POST /logs with NDJSON bodies of 1,000 records (8
 * connections). Records per second end to end, accepted and stored: from the
 * first request of a 10 s run until the stored count equals the accepted
 * count. The store's own ceiling: the same NDJSON bytes inserted straight into
 * a chDB of the bench's own, joined into inserts the size the service's writer
 * cuts (logs.batch_records / logs.batch_bytes defaults), for a similar volume,
 * each with a deduplication token of its own as the writer's, and checked to
 * be stored (the bytes repeat, and `logs` may drop a repeat sent without one).
 * The two alternate in paired rounds (harness/rounds.ts). Inserting the posted
 * 1,000-record batches one by one is measured once too, for reference: it is
 * far slower (every insert makes parts in logs and its rollup views).
 */
import { cpuMicros, describeCpu, withCpu } from '../harness/cpu.js';
import { insertRate, withDirectClickHouse, type Batch } from '../harness/direct-clickhouse.js';
import { ackCost, ackRows, ackTarget } from '../harness/ack-cost.js';
import { runLoad, type LoadOptions } from '../harness/load.js';
import { settleStored, storedLogs } from '../harness/log-count.js';
import { okResult, target, type ScenarioResult } from '../harness/results.js';
import { median, pairedRounds } from '../harness/rounds.js';
import { sampleRss } from '../harness/rss.js';
import { startService, type BenchService } from '../harness/service.js';
import { mb, pct, printTable } from '../harness/table.js';
import { ndjsonBodies } from '../fixtures/log-records.js';
import { settingSpecs } from '../../config/settings.js';
import type { ScenarioOptions } from './options.js';

const name = 'ingest-batch';
const perBody = 1000;
/** Records in each posted body (bench:compare's batch load counts records with it). */
export const BATCH_RECORDS = perBody;

/** The scenario's load: 8 connections posting NDJSON bodies of 1,000 records. */
export const ingestBatchLoad = (seconds: number): Omit<LoadOptions, 'base'> => ({
  path: '/logs',
  headers: { 'content-type': 'application/x-ndjson' },
  bodies: ndjsonBodies(8, perBody),
  connections: 8,
  pipelining: 1,
  seconds,
});

/** The bodies, cycled, joined into two inserts of the writer's default size. */
function writerSized(bodies: Buffer[]): Batch[] {
  const maxRecords = settingSpecs.logBatchRecords.default;
  const maxBytes = settingSpecs.logBatchBytes.default;
  const perInsert = Math.max(1, Math.min(Math.floor(maxRecords / perBody), Math.floor(maxBytes / bodies[0]!.length)));
  return [0, 1].map((n) => ({
    data: Buffer.concat(Array.from({ length: perInsert }, (_, k) => bodies[(n * perInsert + k) % bodies.length]!)),
    rows: perInsert * perBody,
  }));
}

export async function ingestBatch(opts: ScenarioOptions = {}): Promise<ScenarioResult> {
  const seconds = opts.seconds ?? 10;
  const load = ingestBatchLoad(seconds);
  const bodies = load.bodies;
  const posted: Batch[] = bodies.map((data) => ({ data, rows: perBody }));
  const joined = writerSized(bodies);

  return withDirectClickHouse(async (ch) => {
    // The ceiling counts only if its rows are stored, not dropped as repeats (direct-clickhouse.ts, insertRate).
    const ceilingRuns: Array<{ rows: number; stored: number }> = [];
    const ceiling = async (batches: Batch[], records: number) => {
      const r = await insertRate(ch, batches, records);
      ceilingRuns.push(r);
      return r;
    };
    await ceiling(joined, 2 * joined[0]!.rows); // warm-up
    const asPosted = await ceiling(posted, 100 * perBody);

    let svc: BenchService | undefined;
    try {
      svc = await startService(opts.serviceEnv, opts.nodeArgs);
      const s = svc;
      // Warm-up (JIT, first parts), written out before the rounds start.
      // Counted from what the store held before (a store seeded with history is not empty: ingest-history).
      const initially = await storedLogs(s.base);
      const warm = await runLoad({ ...load, base: s.base, seconds: 2 });
      let stored = (await settleStored(s.base, initially + warm.ok * perBody)).stored;
      const storedBefore = stored;
      let volume = 1_000_000;

      const rss = sampleRss(s.pid);
      const paired = await pairedRounds(
        opts.rounds ?? 3,
        () =>
          withCpu(s.pid, async () => {
            const run = await runLoad({ ...load, base: s.base });
            const accepted = run.ok * perBody;
            const settled = await settleStored(s.base, stored + accepted, 10_000);
            const reached = settled.stored === stored + accepted;
            stored = settled.stored;
            volume = accepted;
            const e2eSeconds = (settled.at - run.startedAt) / 1000;
            return { run, accepted, reached, e2eSeconds, rate: accepted / e2eSeconds };
          }),
        // chDB runs in this process: its CPU is this process's while nothing else runs here.
        () => withCpu(process.pid, () => ceiling(joined, volume)),
        (sv, ce) => sv.value.rate / ce.value.rate,
      );
      const peakRss = rss.stop();

      const rounds = paired.rounds.map((r) => ({
        end_to_end_records_per_s: r.service.value.rate,
        store_records_per_s: r.ceiling.value.rate,
        store_cpu_us_per_record: cpuMicros(r.ceiling.server, r.ceiling.value.rows),
        ratio: r.ratio,
        accepted_records: r.service.value.accepted,
        e2e_seconds: r.service.value.e2eSeconds,
        http_records_per_s: r.service.value.run.rps * perBody,
        p99_ms: r.service.value.run.latencyMs.p99,
        service_cpu_cores: r.service.server.cores,
        service_cpu_us_per_record: cpuMicros(r.service.server, r.service.value.accepted),
      }));
      const med = (k: keyof (typeof rounds)[number]): number => median(rounds.map((r) => r[k]));
      const runs = paired.rounds.map((r) => r.service.value);
      // 503 + Retry-After is the documented backpressure once the disk spool is full (the load outruns the store), not a failure.
      const backpressure = runs.reduce((n, r) => n + (r.run.statuses['503'] ?? 0), 0);
      const failures = runs.reduce((n, r) => n + r.run.errors + r.run.non2xx + r.run.unanswered, 0) - backpressure;
      const allStored = runs.every((r) => r.reached);
      // A round stops waiting after 10 s without a stored record; a store that stalls longer (merges on a large
      // history) ends it early. Whether anything was lost is told by the count once the writer has been quiet a minute.
      const acceptedInRounds = runs.reduce((n, r) => n + r.accepted, 0);
      const final = await settleStored(s.base, storedBefore + acceptedInRounds, 60_000);
      const finalStored = final.stored === storedBefore + acceptedInRounds;
      const last = paired.rounds[paired.rounds.length - 1]!;
      const ceilingInserted = ceilingRuns.reduce((n, r) => n + r.rows, 0);
      const ceilingStored = ceilingRuns.reduce((n, r) => n + r.stored, 0);
      // The service acknowledges durably (the default); records answered 202 per second against a memory-mode one, same run.
      const ack = await ackCost(s.base, opts.rounds ?? 3, opts.nodeArgs, async (base) => (await runLoad({ ...load, base })).rps * perBody);

      printTable(`${name}: NDJSON bodies of ${perBody} records, ${load.connections} connections, ${rounds.length} rounds of ${seconds} s`, [
        ['ratio end to end / store (median of rounds)', pct(paired.ratio)],
        ['  per round', rounds.map((r) => pct(r.ratio)).join(', ')],
        ['service records/s end to end, per round', rounds.map((r) => Math.round(r.end_to_end_records_per_s)).join(', ')],
        ['  first request -> all stored (s)', rounds.map((r) => r.e2e_seconds.toFixed(1)).join(', ')],
        ['  accepted over HTTP, records/s', rounds.map((r) => Math.round(r.http_records_per_s)).join(', ')],
        [`store records/s (inserts of ${joined[0]!.rows} rows)`, rounds.map((r) => Math.round(r.store_records_per_s)).join(', ')],
        [`store records/s (inserts of ${perBody} rows, once)`, asPosted.rate],
        ['errors + unanswered + non-2xx other than 503', failures],
        ['503 backpressure answers (spool full; retry later)', backpressure],
        ['  statuses per round', runs.map((r) => JSON.stringify(r.run.statuses)).join('; ')],
        ['p99 latency per request (ms), per round', rounds.map((r) => r.p99_ms).join(', ')],
        ['service CPU us/record (median)', med('service_cpu_us_per_record')],
        ['store CPU us/record, direct (median)', med('store_cpu_us_per_record')],
        ['store: stored == inserted (direct inserts)', `${ceilingStored === ceilingInserted ? 'yes' : 'NO'}: ${ceilingStored} of ${ceilingInserted}`],
        ['service CPU, last round', describeCpu(last.service.server)],
        ['service peak RSS during the rounds', mb(peakRss)],
        ['stored == accepted, every round (10 s quiet)', allStored ? 'yes' : `NO (${runs.map((r) => (r.reached ? 'yes' : 'no')).join(', ')})`],
        ['stored == accepted after the rounds (60 s quiet)', `${finalStored ? 'yes' : 'NO'}: ${final.stored - storedBefore} of ${acceptedInRounds}`],
        ...ackRows(ack, 'records/s accepted'),
      ]);
      return okResult(
        name,
        { name: 'end-to-end records/s / store records/s (median of paired rounds)', value: paired.ratio },
        {
          seconds,
          rounds: rounds.length,
          connections: load.connections,
          records_per_request: perBody,
          end_to_end_records_per_s: med('end_to_end_records_per_s'),
          store_records_per_s: med('store_records_per_s'),
          store_rows_per_insert: joined[0]!.rows,
          store_records_per_s_1000_row_inserts: asPosted.rate,
          http_records_per_s: med('http_records_per_s'),
          e2e_seconds_median: med('e2e_seconds'),
          failures,
          backpressure_503: backpressure,
          p99_ms_median: med('p99_ms'),
          service_cpu_us_per_record: med('service_cpu_us_per_record'),
          store_cpu_us_per_record: med('store_cpu_us_per_record'),
          service_cpu_threads_last_round: describeCpu(last.service.server, 8),
          service_peak_rss_bytes: peakRss,
          service_idle_rss_bytes: s.idleRss,
          stored_equals_accepted: finalStored,
          stored_equals_accepted_every_round: allStored,
          store_stored_equals_inserted: ceilingStored === ceilingInserted,
          ack_durable_over_memory: ack.ratio,
          ack_durable_records_per_s: JSON.stringify(ack.durable),
          ack_memory_records_per_s: JSON.stringify(ack.memory),
        },
        [
          target('ratio >= 50% of the store ceiling', paired.ratio, 0.5),
          target('stored == accepted (after the rounds)', finalStored ? 1 : 0, 1),
          target('the store ceiling stored every row it inserted', ceilingStored === ceilingInserted ? 1 : 0, 1),
          target('zero errors / non-2xx other than 503 backpressure', failures, 0, true),
          target('peak RSS < 400 MB', (peakRss ?? Infinity) / 1e6, 400 - 1e-9, true),
          ackTarget(ack),
        ],
        rounds,
      );
    } finally {
      await svc?.stop();
    }
  });
}
