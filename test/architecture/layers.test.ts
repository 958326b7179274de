/**
 * Dependencies point one way (docs/architecture.md, "Layers"): every import in
 * src/ goes to the importer's own layer or one it may import, by the rule of
 * layers.ts. The rule itself is tested on synthetic graphs and a synthetic tree,
 * so an upward import is shown to fail, not only the current tree to pass.
 */
import t from 'tap';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { edgesOf, importGraph, layerOf, layers, violations, type Edge } from './layers.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/** One file of each layer, for synthetic edges. */
const sample: Record<string, string> = {
  entry: 'src/service.ts',
  bench: 'src/bench/run.ts',
  http: 'src/http/server.ts',
  actors: 'src/actors/tenancy/keys.ts',
  handles: 'src/actors/tenancy/handles.ts',
  runtime: 'src/actors/runtime/worker.ts',
  storage: 'src/storage/postgres/alerts.ts',
  metrics: 'src/metrics/metrics.ts',
  contract: 'src/contract/input.ts',
  config: 'src/config/settings.ts',
  foundation: 'src/errors.ts',
  console: 'src/console/main.tsx',
};
const edge = (from: string, to: string): Edge => ({ from, to, specifier: to });
const graphOf = (...edges: Edge[]) => ({ files: [...new Set(edges.map((e) => e.from))], edges });

t.test('the source tree imports only downward', async (t) => {
  const graph = importGraph(root);
  t.same(violations(graph), [], 'no file outside a layer, no import the rule refuses');
  // The graph is the real one, not an empty walk: it holds the imports every request path relies on.
  t.ok(graph.files.length > 200, `${graph.files.length} source files read`);
  const crossings = new Set(graph.edges.map((e) => `${layerOf(e.from)} -> ${layerOf(e.to)}`));
  for (const c of ['http -> actors', 'http -> contract', 'actors -> storage', 'actors -> contract', 'actors -> runtime', 'entry -> http']) {
    t.ok(crossings.has(c), `the tree has ${c} imports`);
  }
});

t.test('the imports issue 27 found are refused', async (t) => {
  const cases: Array<[string, string, string]> = [
    ['src/actors/tenancy/keys.ts', 'src/http/route.js', 'actors may not import http'],
    ['src/actors/tenancy/tokens.ts', 'src/http/auth.js', 'actors may not import http'],
    ['src/storage/postgres/alerts.ts', 'src/actors/alerts/values.js', 'storage may not import actors'],
    ['src/actors/runtime/worker.ts', 'src/storage/postgres/pool.js', 'runtime may not import storage'],
    ['src/actors/tenancy/handles.ts', 'src/storage/postgres/tenancy.js', 'handles may not import storage'],
    ['src/actors/tenancy/handles.ts', 'src/actors/tenancy/masters.js', 'handles may not import actors'],
  ];
  for (const [from, to, why] of cases) {
    const found = violations(graphOf(edge(from, to)));
    t.equal(found.length, 1, `${from} -> ${to} is refused`);
    t.match(found[0], `${from}: ${why}`);
  }
});

t.test('every pair of layers is allowed exactly as the table says', async (t) => {
  t.same(Object.keys(sample).sort(), layers.map((l) => l.name).sort(), 'a sample file for every layer');
  for (const [name, file] of Object.entries(sample)) t.equal(layerOf(file), name, `${file} is in ${name}`);
  let refused = 0;
  for (const from of layers) {
    for (const to of layers) {
      if (from === to) continue;
      const found = violations(graphOf(edge(sample[from.name]!, sample[to.name]!)));
      if (from.mayImport.includes(to.name)) t.same(found, [], `${from.name} may import ${to.name}`);
      else {
        refused++;
        t.same(found, [`${sample[from.name]}: ${from.name} may not import ${to.name} ('${sample[to.name]}')`], `${from.name} may not import ${to.name}`);
      }
    }
  }
  t.ok(refused > 40, `${refused} ordered pairs refused`);
  // Nothing below may reach back up: the rule is a one-way order, without cycles.
  const below = (name: string, seen = new Set<string>()): Set<string> => {
    for (const n of layers.find((l) => l.name === name)!.mayImport) if (!seen.has(n)) below(n, seen.add(n));
    return seen;
  };
  for (const l of layers) t.notOk(below(l.name).has(l.name), `${l.name} cannot reach itself through the layers it imports`);
});

t.test('a file no layer claims, and an import leaving src, are refused', async (t) => {
  t.same(violations({ files: ['src/stray/thing.ts'], edges: [] }), ['src/stray/thing.ts: no layer claims this file']);
  t.same(violations(graphOf(edge('src/http/server.ts', 'package.json'))), [
    "src/http/server.ts: imports 'package.json', outside every layer",
  ]);
  t.equal(layerOf('src/errors-extra.ts'), undefined, 'a file layer names one file, not a prefix');
  t.equal(layerOf('src/actors/runtime/mailbox.ts'), 'runtime', 'the longest path wins: runtime within actors');
  t.equal(layerOf('src/actors/alerts/handles.ts'), 'handles', "a domain's handles module is its own layer");
  t.equal(layerOf('src/actors/alerts/handles-extra.ts'), 'actors', 'the pattern names one file, not a prefix');
  t.equal(layerOf('src/actors/a/b/handles.ts'), 'actors', '* stands for one folder name');
});

t.test('every import form is seen; comments and strings are not imports', async (t) => {
  const text = [
    "import a from '../../http/a.js';",
    "import type { B } from '../../http/b.js';",
    "export * from '../../http/c.js';",
    "export { d } from '../../http/d.js';",
    "const e = await import('../../http/e.js');",
    "type F = import('../../http/f.js').F;",
    "import '../../http/g.js';",
    "import { z } from 'zod';",
    "// import y from '../../http/comment.js'",
    "const s = \"import x from '../../http/string.js'\";",
  ].join('\n');
  const edges = edgesOf('src/actors/x/y.ts', text);
  t.same(
    edges.map((e) => e.to),
    ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((n) => `src/http/${n}.js`),
    'seven forms, each resolved against the importing file; packages are not edges',
  );
  t.equal(violations({ files: ['src/actors/x/y.ts'], edges }).length, 7, 'each of them refused');
});

t.test('an upward import added to a source tree fails the check', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cp-layers-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  };
  write('src/contract/input.ts', 'export interface RouteInput { body: unknown }\n');
  write('src/http/route.ts', "import type { RouteInput } from '../contract/input.js';\nexport type R = RouteInput;\n");
  write('src/actors/tenancy/keys.ts', "import type { RouteInput } from '../../contract/input.js';\nexport type K = RouteInput;\n");
  write('src/storage/postgres/keys.ts', 'export const q = 1;\n');
  t.same(violations(importGraph(dir)), [], 'a tree that imports downward passes');

  write('src/actors/tenancy/keys.ts', "import type { R } from '../../http/route.js';\nexport type K = R;\n");
  write('src/storage/postgres/keys.ts', "import type { K } from '../../actors/tenancy/keys.js';\nexport type Q = K;\n");
  t.same(violations(importGraph(dir)).sort(), [
    "src/actors/tenancy/keys.ts: actors may not import http ('../../http/route.js')",
    "src/storage/postgres/keys.ts: storage may not import actors ('../../actors/tenancy/keys.js')",
  ]);
});

t.test('docs/architecture.md states the same table', async (t) => {
  const doc = readFileSync(join(root, 'docs/architecture.md'), 'utf8');
  const table = /<!-- layer-table -->\n([\s\S]*?)\n\n/.exec(doc);
  t.ok(table, 'the table is marked in the document');
  const rows = table![1]!.split('\n').slice(2);
  const list = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
  const stated = rows.map((r) => {
    const [name, paths, mayImport] = r.split('|').slice(1, 4).map((c) => c.trim());
    return { name: list(name!)[0], paths: list(paths!), mayImport: mayImport === 'nothing else' ? [] : list(mayImport!) };
  });
  const expected = layers.map((l) => ({
    name: l.name,
    paths: l.paths.map((p) => (p.endsWith('/') ? p : `${p}.ts`)),
    mayImport: l.mayImport,
  }));
  t.same(stated, expected);
});
