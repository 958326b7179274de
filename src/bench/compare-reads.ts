/**
 * npm run bench:compare-reads -- <a/dist> <b/dist> [--rows N] [--rounds R] [--reads K]:
 * the dashboards bench's statistics reads (scenarios/dashboard-reads.ts) as two builds make them, in one process
 * against one seeded store (harness/seeded-store.ts: BENCH_SEED_DIR, made if missing; default 2,000,000 rows),
 * in interleaved rounds (harness/rounds.ts). In a round each side makes K reads of each call one at a time, the
 * same K ranges and masters for both sides, other ones the next round. Reports per call the median over rounds of
 * the process's CPU a read (every thread: chDB's too) and of the wall time a read, B / A, and how many answers the
 * two builds gave alike.
 *
 * For a change to the read path smaller than the drift between two runs of `npm run bench -- dashboards` on a
 * shared machine: each read is measured alone, so the noise of ten connections and a posting data plane stays out,
 * and CPU a read is what bounds the dashboards' cold reads on two cores (docs/performance.md, "dashboards: the cold
 * read"). Both builds must share this build's ClickHouse schema: the store is seeded by it.
 */
import { rmSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { openClickHouse } from '../storage/clickhouse/open.js';
import type { ClickHouseReader } from '../storage/clickhouse/client.js';
import { CommandLine } from './harness/command-line.js';
import { median, rotatingRounds } from './harness/rounds.js';
import { copyOfStore, seededStore } from './harness/seeded-store.js';
import { printTable } from './harness/table.js';
import type { ReadCall } from './scenarios/dashboard-reads.js';

type ReadCalls = (nowSec: number, masterId: number, jitter: number) => ReadCall[];

const cli = new CommandLine(process.argv.slice(2), 'usage: compare-reads.js <a/dist> <b/dist> [--rows N] [--rounds R] [--reads K]');
const rows = cli.whole('--rows', 2_000_000);
const rounds = cli.whole('--rounds', 6);
const reads = cli.whole('--reads', 8);
const [distA, distB] = cli.positional(2) as [string, string];

const callsOf = async (dist: string): Promise<ReadCalls> =>
  ((await import(pathToFileURL(join(resolve(dist), 'src/bench/scenarios/dashboard-reads.js')).href)) as { readCalls: ReadCalls }).readCalls;
const sides = [await callsOf(distA), await callsOf(distB)];

const store = await seededStore(rows);
const dir = copyOfStore(store);
const ch = await openClickHouse({ dataDir: dir });
try {
  const names = sides[0]!(store.endSec, 1, 0).map((c) => c.name);
  /** Per side, per call: the CPU and wall milliseconds a read, one figure per round. */
  const cpu = sides.map(() => names.map((): number[] => []));
  const wall = sides.map(() => names.map((): number[] => []));
  const answers = sides.map((): unknown[][] => names.map(() => []));
  let calls = 0;
  await rotatingRounds(
    rounds,
    sides.map((readCalls, side) => async () => {
      const round = Math.floor(calls++ / sides.length);
      // The same reads for both sides of a round (ranges off the minute by `jitter` seconds, another master each).
      const picks = Array.from({ length: reads }, (_, k) => ({ jitter: 7 + ((round * reads + k) * 613) % 3593, master: 1 + ((round * reads + k) * 37) % 200 }));
      for (const [i, name] of names.entries()) {
        const started = performance.now();
        const before = process.cpuUsage();
        for (const p of picks) {
          const call = readCalls(store.endSec, p.master, p.jitter).find((c) => c.name === name)!;
          answers[side]![i]!.push(await call.read(ch as ClickHouseReader));
        }
        const used = process.cpuUsage(before);
        cpu[side]![i]!.push((used.user + used.system) / 1000 / reads);
        wall[side]![i]!.push((performance.now() - started) / reads);
      }
    }),
  );
  const same = names.map((_, i) => answers[0]![i]!.filter((a, k) => isDeepStrictEqual(a, answers[1]![i]![k])).length);
  printTable(
    `compare-reads: ${rows.toLocaleString('en-US')} rows, ${rounds} rounds of ${reads} reads a call, one at a time; A ${distA}, B ${distB}`,
    names.map((name, i) => {
      const [ca, cb] = [median(cpu[0]![i]!), median(cpu[1]![i]!)];
      const [wa, wb] = [median(wall[0]![i]!), median(wall[1]![i]!)];
      const perRound = cpu[1]![i]!.map((c, r) => c / cpu[0]![i]![r]!);
      return [
        name,
        `CPU ${ca.toFixed(1)} / ${cb.toFixed(1)} ms a read (B/A ${(cb / ca).toFixed(2)}, rounds ${Math.min(...perRound).toFixed(2)}-${Math.max(...perRound).toFixed(2)}), ` +
          `wall ${wa.toFixed(1)} / ${wb.toFixed(1)} ms (B/A ${(wb / wa).toFixed(2)}), answers alike ${same[i]}/${answers[0]![i]!.length}`,
      ];
    }),
  );
} finally {
  await ch.close();
  rmSync(dir, { recursive: true, force: true });
}
