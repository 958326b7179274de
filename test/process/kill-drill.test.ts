/**
 * The kill drill (docs/log-pipeline.md, "Acknowledgement"): the built service
 * as a child process under a bounded load of batches whose every record
 * carries a marker, killed with SIGKILL at a random moment, restarted on the
 * same data directory, then read back. `durable` (the default): every record
 * answered 202 is stored exactly once, and every rollup agrees with the raw
 * table. `memory`: no more is lost than the service said it had not stored
 * just before the kill (plus what it answered after saying so), and none is
 * stored twice. In both modes every rollup agrees with the raw table: a batch a
 * kill cut short between `logs` and its views is replayed from its write-ahead
 * segment (written per batch in `memory` mode) under the same token. Rollups are
 * read from the store after the last kill: they only grow here, so any kill's
 * double count or miss would show.
 * Both modes run at once, each on its own data directory and database. The
 * kill moments come from a seed, printed: DRILL_SEED=<seed> replays them.
 */
import t, { type Test } from 'tap';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freshDatabase, postgresAvailable } from '../helpers/harness.js';
import { startProcess, type Running } from '../helpers/spawn.js';
import type { Stored } from '../helpers/ch-read.js';

const seed = Number(process.env.DRILL_SEED ?? Math.floor(Math.random() * 2 ** 31));
const rounds = Number(process.env.DRILL_ROUNDS ?? 3);
/** Short, so that several inserts are stored before each kill and a kill often cuts one short. */
const flushMs = 250;
const admin = 'drill-admin';
const readerJs = fileURLToPath(new URL('../helpers/ch-read.js', import.meta.url));

/** mulberry32: a small seeded generator, so a failing run can be replayed. */
function random(s: number): () => number {
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let x = Math.imul(s ^ (s >>> 15), 1 | s);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** The record a marker's batch holds at position `j` (the same j gives the same record but for its marker). */
const recordAt = (j: number) => ({ key_id: 1 + (j % 3), master_id: 1, status_code: j % 9 === 0 ? 500 : 200, model: 'drill', tokens_in: j + 1 });

interface Ack {
  marks: string[];
  at: number;
}

/** Posts batches of 20 marked records on `connections` loops until the service dies; returns what got a 202. */
async function load(base: string, prefix: string, connections: number, until: Promise<unknown>, acks: Ack[] = []): Promise<Ack[]> {
  let dead = false;
  void until.then(() => (dead = true));
  const loop = async (c: number) => {
    for (let seq = 0; !dead; seq++) {
      const marks = Array.from({ length: 20 }, (_, j) => `${prefix}-${c}-${seq}-${j}`);
      const body = marks.map((m, j) => ({ ...recordAt(j), audit_reason: m }));
      try {
        const r = await fetch(`${base}/logs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
        await r.arrayBuffer();
        if (r.status === 202) acks.push({ marks, at: Date.now() });
      } catch {
        return; // the connection died with the process
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, (_, c) => loop(c)));
  return acks;
}

/** Records the service holds and has not stored yet (memory and spool; the insert under way is among them). */
async function pending(base: string): Promise<number> {
  const r = await fetch(`${base}/admin/logs/pipeline`, { headers: { authorization: `Bearer ${admin}` } });
  return ((await r.json()) as { pending: number }).pending;
}

async function drained(base: string): Promise<void> {
  for (;;) {
    if ((await pending(base)) === 0) return;
    await new Promise((res) => setTimeout(res, 100));
  }
}

async function stop(svc: Running): Promise<void> {
  svc.child.kill('SIGTERM');
  await svc.exited;
}

/** How many times each marker is stored, read through the CSV export while the service runs. */
async function storedMarks(base: string): Promise<Map<string, number>> {
  const r = await fetch(`${base}/admin/logs/export?since=0`, { headers: { authorization: `Bearer ${admin}` } });
  const lines = (await r.text()).split('\n').filter(Boolean);
  const col = lines[0]!.split(',').findIndex((c) => c.replace(/"/g, '') === 'audit_reason');
  const marks = new Map<string, number>();
  for (const line of lines.slice(1)) {
    const m = line.split(',')[col]!.replace(/"/g, ''); // the drill's values hold no comma or quote
    marks.set(m, (marks.get(m) ?? 0) + 1);
  }
  return marks;
}

/**
 * `rounds` kills: each round loads the running service, kills it, and starts
 * it again on the same data directory (the next round loads that one). After
 * each restart the markers are read back; after the last, the service is
 * stopped and the store read directly, rollups included.
 */
async function drill(t: Test, mode: 'durable' | 'memory', rnd: () => number): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), `cp-drill-${mode}-`));
  const db = (await postgresAvailable()) ? await freshDatabase() : undefined;
  t.teardown(async () => {
    await db?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const env: Record<string, string> = {
    SVC_DATA_DIR: dataDir,
    SVC_ADMIN_TOKEN: admin,
    SVC_LOG_ACK: mode,
    SVC_LOG_FLUSH_MS: String(flushMs),
    SVC_LOG_LEVEL: 'info', // startProcess waits for the info line "listening"
    SVC_WORKERS: '1',
    ...(db ? { SVC_DATABASE_URL: db.url } : {}),
  };
  /** Markers answered 202 and not (yet) found lost, with when. */
  const acked = new Map<string, number>();
  let svc = await startProcess(env, 180_000);
  const check = (marks: Map<string, number> | Record<string, number>, label: string, unstored?: number): void => {
    const count = (m: string) => (marks instanceof Map ? marks.get(m) : marks[m]) ?? 0;
    const all = marks instanceof Map ? [...marks] : Object.entries(marks);
    t.same(all.filter(([, n]) => n > 1).slice(0, 5), [], `${label}: no record stored twice`);
    const lost = [...acked].filter(([m]) => count(m) === 0);
    if (mode === 'durable' || unstored === undefined) {
      t.same(lost.slice(0, 5), [], `${label}: every record answered 202 is stored (${acked.size})`);
    } else {
      // The documented loss is what was accepted and not yet stored. It is measured, not timed: on a loaded machine
      // the inserts fall behind and hold more than one flush window.
      t.ok(lost.length <= unstored, `${label}: ${lost.length} records lost, at most the ${unstored} not yet stored when it was killed`);
      for (const [m] of lost) acked.delete(m);
    }
  };
  for (let round = 1; round <= rounds; round++) {
    // memory loads a second longer, so that most of what it answered is stored before the kill.
    const killAfterMs = Math.round((mode === 'memory' ? 1000 : 0) + 300 + rnd() * 1200);
    const began = Date.now();
    const answered: Ack[] = [];
    const acks = load(`http://127.0.0.1:${svc.port}`, `${mode}-${round}`, 8, svc.exited, answered);
    // The moment counts from the first 202, so that every round kills a service under load, however slow its warm-up.
    while (answered.length === 0) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, killAfterMs));
    const sampledAt = Date.now();
    const notStored = await pending(`http://127.0.0.1:${svc.port}`);
    svc.child.kill('SIGKILL');
    await svc.exited;
    const got = await acks;
    for (const a of got) for (const m of a.marks) acked.set(m, a.at);
    const unstored = notStored + got.filter((a) => a.at >= sampledAt).length * 20;
    t.ok(got.length > 0, `round ${round}: SIGKILL ${killAfterMs} ms after the first 202, after ${got.length} batches answered 202`);
    svc = await startProcess(env, 180_000);
    const base = `http://127.0.0.1:${svc.port}`;
    await drained(base);
    check(await storedMarks(base), `round ${round}`, unstored);
    t.comment(`${mode} round ${round}: ${Date.now() - began} ms`);
  }
  await stop(svc);
  const { stdout } = await promisify(execFile)(process.execPath, [readerJs, dataDir], { maxBuffer: 256 * 1024 * 1024 });
  const stored = JSON.parse(stdout) as Stored;
  check(stored.marks, 'read from the store after the last restart');
  t.comment(`${mode}: logs ${stored.raw}, rollups ${JSON.stringify(stored.rollups)} (requests/tokens/errors)`);
  // Rollups only grow here (nothing is deleted), so a block counted twice or missed after any kill shows now. In
  // both modes a batch cut short between `logs` and its views is replayed from its segment under the same token.
  for (const [table, v] of Object.entries(stored.rollups)) t.equal(v, stored.raw, `${table} agrees with logs after ${rounds} kills (requests/tokens/errors)`);
  // A kill between a table's deduplication log and its part is mended at start (log-replay.ts, repairRollups).
  t.same(stored.mismatches, [], `every rollup agrees with logs group by group after ${rounds} kills`);
}

t.test(`kill drill, seed ${seed} (DRILL_SEED=${seed} replays it)`, { timeout: 600_000, jobs: 2 }, async (t) => {
  t.comment(`DRILL_SEED=${seed}`);
  // One generator per mode: the modes run at once, and each replays its own kill moments.
  await Promise.all((['durable', 'memory'] as const).map((mode, i) => t.test(mode, (t) => drill(t, mode, random(seed + i)))));
});
