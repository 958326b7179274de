/**
 * Where a thread's time went, from a V8 .cpuprofile (node --cpu-prof; pass
 * `--service-node-args "--cpu-prof --cpu-prof-dir=DIR"` to npm run bench):
 *
 *   node dist/src/bench/profile/stages.js FILE [--from S] [--to S] [--per N] [--timeline]
 *
 * --timeline prints how busy the thread was each second (to find the measured
 * window); --from/--to (seconds into the profile) narrow to it; --per N
 * divides by N requests (or records) for microseconds each. Each sample is
 * charged to the first stage matching its stack from the leaf up.
 */
import { readFileSync } from 'node:fs';

interface Frame {
  functionName: string;
  url: string;
}
interface ProfileNode {
  id: number;
  callFrame: Frame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const stages: Array<[string, (f: Frame) => boolean]> = [
  ['embedded Postgres (PGlite, WASM)', (f) => /pglite|wasm/.test(f.url) || f.functionName.startsWith('wasm-')],
  ['async_hooks (AsyncLocalStorage promise hooks)', (f) => /async_hooks/.test(f.url) && f.functionName !== 'callbackTrampoline'],
  ['metrics (prom-client)', (f) => /prom-client|metrics\/metrics\.js/.test(f.url)],
  ['logs: parse + validate', (f) => /logs\/parse\.js/.test(f.url)],
  ['logs: writer + ClickHouse calls', (f) => /logs\/(writer|spool)\.js|chdb|clickhouse/.test(f.url)],
  ['logs: rows (toRow, JSON.stringify, ids)', (f) => /logs\/(actor|record|ids)\.js|clickhouse\/logs-table\.js/.test(f.url)],
  ['shared store + outbox relay', (f) => /redis\/|outbox\//.test(f.url)],
  ['Postgres client (slonik, pg)', (f) => /slonik|node_modules\/pg|postgres\//.test(f.url)],
  ['actor hop (ask, mailbox, piscina)', (f) => /runtime\/(system|mailbox)\.js|piscina/.test(f.url)],
  ['http: client address', (f) => f.functionName === 'socketAddress' || f.functionName === 'get clientIp'],
  ['http: request id', (f) => /randomUUID|getBufferedUUID|randomFillSync|serializeUUID/.test(f.functionName)],
  ['http: reply', (f) => /http\/reply\.js|fast-json-stringify/.test(f.url)],
  ['http: body copy', (f) => f.functionName === 'readBody' || /node:buffer|internal\/buffer/.test(f.url)],
  ['http: dispatch, auth, validation, routes', (f) => /src\/http\//.test(f.url) || /ajv/.test(f.url)],
];

function stageOf(stack: Frame[]): string {
  const leaf = stack[0]!;
  if (leaf.functionName === '(idle)') return '(idle)';
  if (leaf.functionName === '(garbage collector)') return 'GC';
  if (leaf.functionName === '(program)') return '(program: native code, uWS, V8)';
  for (const f of stack) for (const [name, test] of stages) if (test(f)) return name;
  return 'other JS';
}

const args = process.argv.slice(2);
const file = args[0];
if (!file) {
  process.stderr.write('usage: stages.js FILE [--from S] [--to S] [--per N] [--timeline]\n');
  process.exit(2);
}
const opt = (name: string): number | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : undefined;
};
const from = (opt('--from') ?? 0) * 1e6;
const to = (opt('--to') ?? Infinity) * 1e6;
const per = opt('--per');

const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const stackOf = new Map<number, string>();
const stage = (id: number): string => {
  let s = stackOf.get(id);
  if (s === undefined) {
    const stack: Frame[] = [];
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) stack.push(byId.get(cur)!.callFrame);
    s = stageOf(stack);
    stackOf.set(id, s);
  }
  return s;
};

let t = 0;
const totals = new Map<string, number>();
const seconds = new Map<number, { busy: number; all: number }>();
for (let i = 0; i < profile.samples.length; i++) {
  const d = profile.timeDeltas[i] ?? 0;
  t += d;
  const s = stage(profile.samples[i]!);
  const sec = seconds.get(Math.floor(t / 1e6)) ?? { busy: 0, all: 0 };
  sec.all += d;
  if (s !== '(idle)') sec.busy += d;
  seconds.set(Math.floor(t / 1e6), sec);
  if (t >= from && t <= to) totals.set(s, (totals.get(s) ?? 0) + d);
}

if (args.includes('--timeline')) {
  for (const [sec, v] of seconds) process.stdout.write(`${String(sec).padStart(4)} s  busy ${Math.round((v.busy / v.all) * 100)}%\n`);
} else {
  const busy = [...totals].filter(([k]) => k !== '(idle)').reduce((n, [, v]) => n + v, 0);
  const all = busy + (totals.get('(idle)') ?? 0);
  process.stdout.write(`window ${(all / 1e6).toFixed(1)} s, busy ${(busy / 1e6).toFixed(2)} s (${Math.round((busy / all) * 100)}%)\n`);
  for (const [k, v] of [...totals].filter(([k]) => k !== '(idle)').sort((a, b) => b[1] - a[1])) {
    const each = per ? `${(v / per).toFixed(2).padStart(7)} us each  ` : '';
    process.stdout.write(`${((v / busy) * 100).toFixed(1).padStart(5)}%  ${each}${k}\n`);
  }
}
