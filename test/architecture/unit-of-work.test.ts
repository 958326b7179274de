/**
 * One unit of work and one home for the data plane's contract
 * (docs/architecture.md, "Configuration changes"): outside src/storage no file
 * builds a shared-store operation or queues an outbox entry, and only the unit
 * of work (src/actors/outbox/change.ts) queues entries and asks the relay to
 * deliver them. The rule is also run on synthetic text, so a copy is shown to
 * fail, not only the current tree to pass.
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { importGraph } from './layers.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const unitOfWork = 'src/actors/outbox/change.ts';

/** A store operation written out by hand (`{ op: 'hset', key: … }`). */
const storeOp = /\bop:\s*'(set|del|hset|hdel|hincrby|sadd|srem|publish)'/;
/** Queuing outbox entries, or asking the relay to deliver them. */
const queuing = /\benqueue(Entries|Change)\b|'outbox',\s*'(kick|settle)'/;

/** One line per file outside storage that builds a store operation or queues entries itself. */
function copies(files: Array<{ path: string; text: string }>): string[] {
  const out: string[] = [];
  for (const { path, text } of files) {
    if (path.startsWith('src/storage/') || path.startsWith('src/bench/')) continue;
    if (storeOp.test(text)) out.push(`${path}: builds a store operation (use src/storage/redis/writers)`);
    if (path !== unitOfWork && queuing.test(text)) out.push(`${path}: queues or delivers outbox entries (use commitChange)`);
  }
  return out;
}

t.test('the tree has one unit of work and one home for store writes', async (t) => {
  const files = importGraph(root).files.map((path) => ({ path, text: readFileSync(root + path, 'utf8') }));
  t.same(copies(files), [], 'no copy outside their homes');
  const change = files.find((f) => f.path === unitOfWork);
  t.ok(change && queuing.test(change.text), 'the unit of work queues and delivers');
  t.ok(files.some((f) => f.path.startsWith('src/actors/') && /\bcommitChange\(/.test(f.text) && f.path !== unitOfWork), 'domains use it');
});

t.test('a copy is found', async (t) => {
  const found = copies([
    { path: 'src/actors/things/actor.ts', text: "await enqueueEntries(tx, [[{ op: 'set', key: 'thing:1', value: 'x' }]]);" },
    { path: 'src/actors/things/other.ts', text: "await ctx.ask('outbox', 'kick');" },
    { path: 'src/storage/redis/writers/things.ts', text: "({ op: 'set', key: 'thing:1', value: 'x' })" },
  ]);
  t.same(found, [
    'src/actors/things/actor.ts: builds a store operation (use src/storage/redis/writers)',
    'src/actors/things/actor.ts: queues or delivers outbox entries (use commitChange)',
    'src/actors/things/other.ts: queues or delivers outbox entries (use commitChange)',
  ]);
});
