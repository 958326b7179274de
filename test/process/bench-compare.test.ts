/**
 * npm run bench:compare runs two builds side by side: here the built service
 * against itself, one short round, end to end (both boot, take load, store
 * what they accepted), one build under two settings with the batch load, and
 * its usage errors.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const compare = fileURLToPath(new URL('../../src/bench/compare.js', import.meta.url));
const main = fileURLToPath(new URL('../../src/main.js', import.meta.url));

t.test('compares two builds: per-round figures, and both store what they accepted', async (t) => {
  // Memory acknowledgement: ingest-single pipelines 10 requests a connection, and a pipelined request to a route that
  // answers after an await (durable POST /logs answers after the fdatasync) gets no answer yet (docs/log-pipeline.md).
  const run = spawnSync(process.execPath, [compare, main, main, '--rounds', '1', '--seconds', '1', '--env-a', 'SVC_LOG_ACK=memory', '--env-b', 'SVC_LOG_ACK=memory'], { encoding: 'utf8', timeout: 240_000 });
  t.equal(run.status, 0, run.stderr);
  t.match(run.stdout, /compare: ingest-single load, 1 interleaved rounds of 1 s/);
  t.match(run.stdout, /A\s+\S+main\.js SVC_LOG_ACK=memory/);
  t.match(run.stdout, /JS thread CPU us\/request, median A \/ B\s+[\d.]+ \/ [\d.]+/);
  t.match(run.stdout, /errors \+ non-2xx \+ unanswered A \/ B\s+0 \/ 0/);
  t.match(run.stdout, /stored == accepted A \/ B\s+yes \/ yes/);
});

t.test('one build under two settings, with the batch load: rates and CPU count records', async (t) => {
  const run = spawnSync(process.execPath, [compare, main, main, '--rounds', '1', '--seconds', '1', '--load', 'batch', '--env-a', 'SVC_LOG_FLUSH_MS=500', '--env-b', 'SVC_LOG_FLUSH_MS=1000'], { encoding: 'utf8', timeout: 240_000 });
  t.equal(run.status, 0, run.stderr);
  t.match(run.stdout, /compare: ingest-batch load, 1 interleaved rounds of 1 s/);
  t.match(run.stdout, /A\s+\S+main\.js SVC_LOG_FLUSH_MS=500/);
  t.match(run.stdout, /B\s+\S+main\.js SVC_LOG_FLUSH_MS=1000/);
  t.match(run.stdout, /records\/s, median A \/ B\s+\d+ \/ \d+/);
  t.match(run.stdout, /JS thread CPU us\/record, median A \/ B\s+[\d.]+ \/ [\d.]+/);
  t.match(run.stdout, /stored == accepted A \/ B\s+yes \/ yes/);
});

t.test('refuses a call without two builds, or with a bad round count', async (t) => {
  for (const args of [[main], [main, main, '--rounds', '0'], [main, main, '--seconds', 'x'], [main, main, '--load', 'both']]) {
    const run = spawnSync(process.execPath, [compare, ...args], { encoding: 'utf8' });
    t.equal(run.status, 2, args.join(' '));
    t.match(run.stderr, /usage: compare\.js/);
  }
});
