/**
 * ingest-history: ingest-single and ingest-batch on an empty store, then on a
 * store already holding BENCH_HISTORY_ROWS rows (default 20,000,000; the
 * issue's figure is 200,000,000), each as its own scenario runs it, so each
 * run pairs the service with its ceiling round by round (bare uWS, or direct
 * inserts into an empty store); the history's cost is the run's paired ratio
 * with history over the same on an empty store (the rates' ratio is reported
 * beside it, and moves with the machine between the runs). The
 * history is a hard-linked copy of a seeded store (harness/seeded-store.ts),
 * so the kept store stays as seeded and the copy costs no disk until the
 * service writes. Reports, per scenario, that ratio (target: within 10%),
 * the peak RSS of both, and the disk the history takes per million rows.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { okResult, target, type ScenarioResult } from '../harness/results.js';
import { copyOfStore, diskBytes, seededStore } from '../harness/seeded-store.js';
import { mb, pct, printTable } from '../harness/table.js';
import { ingestBatch } from './ingest-batch.js';
import { ingestSingle } from './ingest-single.js';
import type { ScenarioOptions } from './options.js';

const name = 'ingest-history';

/** The figure each scenario's rate is read from. */
const RATES: Array<{ label: string; run: (o: ScenarioOptions) => Promise<ScenarioResult>; rate: string }> = [
  { label: 'ingest-single', run: ingestSingle, rate: 'service_rps' },
  { label: 'ingest-batch', run: ingestBatch, rate: 'end_to_end_records_per_s' },
];

export async function ingestHistory(opts: ScenarioOptions = {}): Promise<ScenarioResult> {
  const rows = Number(process.env.BENCH_HISTORY_ROWS ?? 20_000_000);
  if (!Number.isSafeInteger(rows) || rows < 1000) throw new Error('BENCH_HISTORY_ROWS: a row count of 1000 or more');
  const store = await seededStore(rows);
  const figures: ScenarioResult['figures'] = {
    history_rows: rows,
    seed_seconds: store.seedSeconds,
    history_disk_bytes: store.bytes,
    disk_bytes_per_million_rows: (store.bytes / rows) * 1e6,
  };
  const lines: Array<[string, string | number]> = [];
  const targets = [];
  const ratios: number[] = [];
  // BENCH_HISTORY_LOADS (comma-separated labels) runs some of them only.
  const only = process.env.BENCH_HISTORY_LOADS?.split(',');
  for (const s of RATES.filter((r) => !only || only.includes(r.label))) {
    const empty = await s.run(opts);
    const dir = copyOfStore(store);
    let full: ScenarioResult;
    let after: number;
    try {
      full = await s.run({ ...opts, serviceEnv: { ...opts.serviceEnv, SVC_DATA_DIR: dir } });
      after = diskBytes(join(dir, 'clickhouse'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const ratio = Number(full.figures[s.rate]) / Number(empty.figures[s.rate]);
    // Each run's own paired ratio (the service over its ceiling, measured in the same rounds) cancels a machine that
    // runs slower or faster between the two runs; the history's cost is what is left.
    const paired = Number(full.ratio?.value) / Number(empty.ratio?.value);
    ratios.push(paired);
    const key = s.label.replace('-', '_');
    Object.assign(figures, {
      [`${key}_rate_empty`]: empty.figures[s.rate] ?? null,
      [`${key}_rate_history`]: full.figures[s.rate] ?? null,
      [`${key}_history_over_empty`]: ratio,
      [`${key}_paired_ratio_empty`]: empty.ratio?.value ?? null,
      [`${key}_paired_ratio_history`]: full.ratio?.value ?? null,
      [`${key}_paired_history_over_empty`]: paired,
      [`${key}_peak_rss_empty_bytes`]: empty.figures.service_peak_rss_bytes ?? null,
      [`${key}_peak_rss_history_bytes`]: full.figures.service_peak_rss_bytes ?? null,
      [`${key}_disk_after_bytes`]: after,
      [`${key}_stored_equals_accepted_history`]: full.figures.stored_equals_accepted ?? null,
    });
    lines.push(
      [`${s.label}: ${s.rate} empty / with history`, `${Math.round(Number(empty.figures[s.rate]))} / ${Math.round(Number(full.figures[s.rate]))}`],
      [`${s.label}: with history / empty, rates`, pct(ratio)],
      [`${s.label}: ${empty.ratio?.name ?? 'paired ratio'}, empty / with history`, `${pct(Number(empty.ratio?.value))} / ${pct(Number(full.ratio?.value))}`],
      [`${s.label}: with history / empty, paired ratios`, pct(paired)],
      [`${s.label}: peak RSS empty / with history`, `${mb(empty.figures.service_peak_rss_bytes as number | null)} / ${mb(full.figures.service_peak_rss_bytes as number | null)}`],
      [`${s.label}: store disk after the run`, mb(after)],
      [`${s.label}: stored == accepted, empty / with history`, `${empty.figures.stored_equals_accepted ? 'yes' : 'NO'} / ${full.figures.stored_equals_accepted ? 'yes' : 'NO'}`],
    );
    targets.push(target(`${s.label} with history within 10% of empty (paired ratios)`, paired, 0.9));
    targets.push(target(`${s.label}: stored == accepted on both stores`, empty.figures.stored_equals_accepted && full.figures.stored_equals_accepted ? 1 : 0, 1));
  }
  printTable(`${name}: ingestion on an empty store and on ${rows.toLocaleString('en-US')} stored rows`, [
    ...lines,
    ['history: seed time', `${store.seedSeconds.toFixed(1)} s${store.reused ? ' (reused store)' : ''}`],
    ['history: disk, per million rows', `${mb(store.bytes)}, ${mb((store.bytes / rows) * 1e6)}`],
  ]);
  return okResult(name, { name: 'paired ratio with history / on an empty store (worst scenario)', value: Math.min(...ratios) }, figures, targets);
}
