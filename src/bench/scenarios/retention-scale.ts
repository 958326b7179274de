/**
 * retention-scale: retention and delete by condition on a store holding
 * BENCH_RETENTION_ROWS rows (default 20,000,000; the figure is
 * 200,000,000), through the code the service runs:
 *
 * 1. retention with log_retention_days = 29 over the seeded 30 days
 *    (src/actors/logs/retention.ts): whole day partitions older than the
 *    cutoff are dropped from the raw table and the rollups, the rest of the
 *    boundary day is deleted and its rollup rows rebuilt; timed;
 * 2. delete by condition of one master's records (storage/clickhouse/logs.ts,
 *    deleteLogs, as DELETE /admin/logs?master_id=… runs it); timed;
 * 3. after each: every rollup checked against the raw table group by group
 *    (storage/clickhouse/rollup-check.ts), and the list's totals (read from the
 *    rollups) against raw counts.
 *
 * It works on a hard-linked copy of the seeded store (harness/seeded-store.ts),
 * removed afterwards, so the kept store stays whole for the next run.
 */
import { rmSync } from 'node:fs';
import { flagDefaults } from '../../actors/features/flags.js';
import { enforceRetention } from '../../actors/logs/retention.js';
import { createLogger } from '../../logger.js';
import { countSlices, sliceTotal } from '../../storage/clickhouse/log-counts.js';
import { countLogs, deleteLogs, type LogFilter } from '../../storage/clickhouse/logs.js';
import { openClickHouse } from '../../storage/clickhouse/open.js';
import { rollupMismatches } from '../../storage/clickhouse/rollup-check.js';
import type { ClickHouse } from '../../storage/clickhouse/client.js';
import { okResult, target, type ScenarioResult } from '../harness/results.js';
import { copyOfStore, seededStore } from '../harness/seeded-store.js';
import { printTable } from '../harness/table.js';
import type { ScenarioOptions } from './options.js';

const name = 'retention-scale';
const MASTER = 17;

/** Filters whose list totals (from the rollups) must equal raw counts. */
const CHECKED: LogFilter[] = [{}, { master_id: MASTER }, { master_id: MASTER + 1 }, { model: 'model-3' }, { key_id: MASTER * 25 + 3 }];

/** A line per step on stderr, so that a long run at 200M rows shows where it is. */
const progress = (line: string): void => {
  process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${name}: ${line}\n`);
};

async function agreement(ch: ClickHouse): Promise<{ mismatchedGroups: number; wrongTotals: number; seconds: number }> {
  const t = performance.now();
  // Through the sources (three scans of the raw table instead of ten, zero exactly when every rollup agrees with it),
  // a day at a time (at 200M rows, one aggregation over every key's minutes spent most of an hour on its memory).
  const mismatchedGroups = (await rollupMismatches(ch, { viaSources: true, byDay: true })).reduce((a, m) => a + m.groups, 0);
  progress(`  rollups compared with the raw table: ${mismatchedGroups} groups differ (${((performance.now() - t) / 1000).toFixed(1)} s)`);
  let wrongTotals = 0;
  for (const f of CHECKED) {
    const slices = await countSlices(ch, f);
    if (sliceTotal(slices) !== (await countLogs(ch, f))) wrongTotals++;
  }
  return { mismatchedGroups, wrongTotals, seconds: (performance.now() - t) / 1000 };
}

export async function retentionScale(_opts: ScenarioOptions = {}): Promise<ScenarioResult> {
  const rows = Number(process.env.BENCH_RETENTION_ROWS ?? 20_000_000);
  if (!Number.isSafeInteger(rows) || rows < 1000) throw new Error('BENCH_RETENTION_ROWS: a row count of 1000 or more');
  const store = await seededStore(rows);
  const dir = copyOfStore(store);
  try {
    const ch = await openClickHouse({ dataDir: dir });
    try {
      progress(`store copied; enforcing retention`);
      const before = await countLogs(ch);
      let t = performance.now();
      const retention = await enforceRetention(ch, { ...flagDefaults, log_retention_days: 29, log_max_records: 0, log_body_retention_days: 0 }, store.endSec * 1000, createLogger('silent'));
      const retentionS = (performance.now() - t) / 1000;
      progress(`retention (29 days) took ${retentionS.toFixed(2)} s; checking agreement`);
      const afterRetention = await agreement(ch);
      progress(`agreement after retention checked in ${afterRetention.seconds.toFixed(1)} s; deleting master ${MASTER}`);
      const masterRows = await countLogs(ch, { master_id: MASTER });
      t = performance.now();
      // Where a deletion's time goes: per statement kind and table (`DELETE FROM logs_minute`, `INSERT INTO logs`…).
      const spent = new Map<string, number>();
      const deleted = await deleteLogs(ch, { before: new Date((store.endSec + 86_400) * 1000), master_id: MASTER }, (sql, ms) => {
        const what = /^(DELETE FROM|INSERT INTO) (\w+)/.exec(sql)?.slice(1).join(' ') ?? sql.slice(0, 40);
        spent.set(what, (spent.get(what) ?? 0) + ms);
      });
      const deleteS = (performance.now() - t) / 1000;
      progress(`master ${MASTER} deleted in ${deleteS.toFixed(2)} s; checking agreement`);
      const afterDelete = await agreement(ch);
      progress(`agreement after the deletion checked in ${afterDelete.seconds.toFixed(1)} s`);
      const left = await countLogs(ch);
      printTable(`${name}: retention and delete by condition on ${rows.toLocaleString('en-US')} rows`, [
        ['retention (29 days): time', `${retentionS.toFixed(2)} s`],
        ['  day partitions dropped (raw / rollups)', `${retention.partitions_dropped} / ${retention.rollup_partitions_dropped}`],
        ['  boundary rows deleted', retention.deleted_by_age],
        ['  rollup groups disagreeing, wrong totals', `${afterRetention.mismatchedGroups}, ${afterRetention.wrongTotals}`],
        [`delete master ${MASTER}: time`, `${deleteS.toFixed(2)} s`],
        ['  rows deleted (expected)', `${deleted} (${masterRows})`],
        ...[...spent]
          .sort(([, a], [, b]) => b - a)
          .map(([what, ms]): [string, string] => [`    ${what}`, `${(ms / 1000).toFixed(2)} s`]),
        ['  rollup groups disagreeing, wrong totals', `${afterDelete.mismatchedGroups}, ${afterDelete.wrongTotals}`],
        ['rows before / after', `${before} / ${left}`],
        ['agreement check time (s)', `${afterRetention.seconds.toFixed(1)}, ${afterDelete.seconds.toFixed(1)}`],
        ['seeded store', `${store.seedSeconds.toFixed(1)} s, ${(store.bytes / 1e6).toFixed(0)} MB${store.reused ? ' (reused)' : ''}`],
      ]);
      const disagreements = afterRetention.mismatchedGroups + afterRetention.wrongTotals + afterDelete.mismatchedGroups + afterDelete.wrongTotals;
      return okResult(
        name,
        { name: 'seconds to delete one master (of 200)', value: deleteS },
        {
          rows,
          seed_seconds: store.seedSeconds,
          disk_bytes: store.bytes,
          retention_seconds: retentionS,
          partitions_dropped: retention.partitions_dropped,
          rollup_partitions_dropped: retention.rollup_partitions_dropped,
          boundary_rows_deleted: retention.deleted_by_age,
          delete_master_seconds: deleteS,
          master_rows_deleted: deleted,
          rollup_groups_disagreeing: afterRetention.mismatchedGroups + afterDelete.mismatchedGroups,
          wrong_totals: afterRetention.wrongTotals + afterDelete.wrongTotals,
          agreement_seconds_after_retention: afterRetention.seconds,
          agreement_seconds_after_delete: afterDelete.seconds,
        },
        [
          target('rollups and totals agree with the raw table after both', disagreements, 0, true),
          target('deleted == the master rows', deleted === masterRows ? 1 : 0, 1),
        ],
      );
    } finally {
      await ch.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
