/**
 * Start-up's stages as the debug log reports them, for a first start (fresh data directory: the databases are
 * created and migrated) and a second start on the same directory. This machine's load makes absolute times
 * meaningless, so the test checks the shape of the path instead: Postgres and chDB open in parallel, every stage is
 * logged with its duration, and a second start, which creates and migrates nothing, reaches listening faster than
 * the first. A start that turned serial again, or a second start that redid the first's work, fails here.
 */
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProcess, type Running } from '../helpers/spawn.js';

type Tap = Parameters<Parameters<typeof t.test>[0]>[0];

interface StageLine {
  stage: string;
  duration_ms: number;
  at_ms: number;
}

const stagesOf = (lines: string[]): { stages: Map<string, StageLine>; total: number } => {
  const stages = new Map<string, StageLine>();
  let total = NaN;
  for (const line of lines) {
    if (!line.startsWith('{')) continue;
    const rec = JSON.parse(line) as { msg?: string } & Partial<StageLine> & { total_ms?: number };
    if (rec.msg === 'start-up stage') stages.set(rec.stage!, rec as StageLine);
    if (rec.msg === 'start-up done') total = rec.total_ms!;
  }
  return { stages, total };
};

async function startAndStop(t: Tap, dataDir: string): Promise<{ stages: Map<string, StageLine>; total: number }> {
  const run: Running = await startProcess({ SVC_DATA_DIR: dataDir, SVC_ADMIN_TOKEN: 'adm', SVC_LOG_LEVEL: 'debug' }, 240_000);
  try {
    const health = await fetch(`http://127.0.0.1:${run.port}/health`);
    t.equal(health.status, 200, 'healthy once listening');
  } finally {
    run.child.kill('SIGTERM');
    await run.exited;
  }
  return stagesOf(run.lines);
}

t.test('start-up logs its stages; Postgres and chDB open in parallel; a second start is faster than the first', { timeout: 600_000 }, async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cp-startup-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));

  const first = await startAndStop(t, dataDir);
  const second = await startAndStop(t, dataDir);
  for (const [name, run] of [['first', first], ['second', second]] as const) {
    for (const stage of ['probe_port', 'open_postgres', 'open_clickhouse', 'migrate_postgres', 'open_store', 'migrate_clickhouse', 'build_routes', 'start_actors', 'start_actor:store-watch', 'listen']) {
      t.ok(run.stages.get(stage)?.duration_ms! >= 0, `${name} start logs ${stage} with its duration`);
    }
    const pg = run.stages.get('open_postgres')!;
    const ch = run.stages.get('open_clickhouse')!;
    // chDB starts opening before Postgres is open: their intervals overlap.
    t.ok(ch.at_ms - ch.duration_ms < pg.at_ms, `${name} start opens chDB while Postgres opens`);
    t.ok(run.total >= run.stages.get('listen')!.at_ms, `${name} start logs its total`);
    t.comment(`${name} start: ${run.total} ms to listening; ${[...run.stages.values()].map((s) => `${s.stage} ${s.duration_ms}`).join(', ')}`);
  }
  t.ok(second.total < first.total, `a second start (${second.total} ms) is faster than the first (${first.total} ms)`);
});
