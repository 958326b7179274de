/**
 * The bench's floor server (ingest-floor) does the service's storing work
 * without its framework. It is a fair floor only if it does all of it: valid
 * records are answered 202 with their id and are all in ClickHouse once its
 * batches are written, invalid ones are refused and not stored. And the
 * rotating rounds that compare it run every side once a round, never the same
 * side first twice in a row.
 */
import { existsSync } from 'node:fs';
import t from 'tap';
import { startFloor } from '../../src/bench/harness/floor.js';
import { call } from '../../src/bench/harness/http.js';
import { settleStored, storedLogs } from '../../src/bench/harness/log-count.js';
import { rotatingRounds } from '../../src/bench/harness/rounds.js';
import { logRecord } from '../../src/bench/fixtures/log-records.js';

t.test('the floor stores every record it accepts and refuses bad ones', async (t) => {
  const floor = await startFloor();
  t.teardown(() => floor.stop().catch(() => undefined));
  t.equal(await storedLogs(floor.base), 0, 'starts empty');

  const ids: number[] = [];
  for (let i = 0; i < 50; i++) {
    const r = await call(floor.base, 'POST', '/logs', { body: logRecord(i), headers: { 'x-request-id': `floor-${i}` } });
    t.equal(r.status, 202);
    t.equal(r.json.accepted, 1);
    ids.push(r.json.id);
  }
  t.ok(ids.every((id, i) => Number.isSafeInteger(id) && (i === 0 || id > ids[i - 1]!)), 'ids are safe integers, increasing');

  for (const bad of [{ key_id: 1 }, { ...logRecord(0), status_code: 5000 }, 'not json']) {
    const r = await call(floor.base, 'POST', '/logs', { body: bad });
    t.equal(r.status, 400, JSON.stringify(bad));
  }

  // The writer's batches wait up to logs.flush_ms; then all 50, and only those, are in ClickHouse.
  const settled = await settleStored(floor.base, 50);
  t.equal(settled.stored, 50);
});

t.test('SIGTERM flushes what the floor holds and it exits 0', async (t) => {
  const floor = await startFloor();
  t.equal((await call(floor.base, 'POST', '/logs', { body: logRecord(1) })).status, 202);
  await t.resolves(floor.stop(), 'stop() rejects on any other exit code');
  t.notOk(existsSync(`/proc/${floor.pid}`), 'the process is gone');
});

t.test('rotating rounds: every side once a round, results in side order, first side alternating', async (t) => {
  const calls: string[] = [];
  const side = (name: string) => async () => {
    calls.push(name);
    return `${name}${calls.length}`;
  };
  const rounds = await rotatingRounds(3, [side('a'), side('b'), side('c')]);
  t.same(calls, ['c', 'b', 'a', 'a', 'b', 'c', 'c', 'b', 'a']);
  t.same(rounds, [
    ['a3', 'b2', 'c1'],
    ['a4', 'b5', 'c6'],
    ['a9', 'b8', 'c7'],
  ]);
});
