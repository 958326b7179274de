/**
 * The layer rule of docs/architecture.md ("Layers") as data, and the import
 * graph of src/ it is checked against. This is the one place the allowed
 * imports are written; layers.test.ts holds the tree to it and checks that the
 * table in docs/architecture.md says the same.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { posix } from 'node:path';
import ts from 'typescript';

export interface Layer {
  name: string;
  /** Repository paths: a folder ends with `/`; a file is named without its extension; `*` stands for one folder name. */
  paths: string[];
  /** Other layers its files may import (its own files always may). */
  mayImport: string[];
}

/** Top to bottom. A file belongs to the layer with the longest matching path. */
export const layers: Layer[] = [
  {
    name: 'entry',
    paths: ['src/main', 'src/cli', 'src/service', 'src/startup-stages'],
    mayImport: ['http', 'actors', 'handles', 'runtime', 'storage', 'metrics', 'contract', 'config', 'foundation'],
  },
  {
    name: 'bench',
    paths: ['src/bench/'],
    mayImport: ['entry', 'http', 'actors', 'handles', 'runtime', 'storage', 'metrics', 'contract', 'config', 'foundation'],
  },
  { name: 'http', paths: ['src/http/'], mayImport: ['actors', 'handles', 'runtime', 'metrics', 'contract', 'config', 'foundation'] },
  { name: 'actors', paths: ['src/actors/'], mayImport: ['handles', 'runtime', 'storage', 'metrics', 'contract', 'config', 'foundation'] },
  // A domain's handles: what routes may name, importable by src/http without the domain's code or its stores.
  { name: 'handles', paths: ['src/actors/*/handles'], mayImport: ['contract', 'foundation'] },
  { name: 'runtime', paths: ['src/actors/runtime/'], mayImport: ['contract', 'config', 'foundation'] },
  { name: 'storage', paths: ['src/storage/'], mayImport: ['metrics', 'contract', 'config', 'foundation'] },
  { name: 'metrics', paths: ['src/metrics/'], mayImport: ['config', 'foundation'] },
  { name: 'contract', paths: ['src/contract/'], mayImport: ['foundation'] },
  { name: 'config', paths: ['src/config/'], mayImport: ['foundation'] },
  { name: 'foundation', paths: ['src/errors', 'src/logger', 'src/version'], mayImport: [] },
  { name: 'console', paths: ['src/console/'], mayImport: [] },
];

const withoutExtension = (path: string) => path.replace(/\.(d\.ts|tsx?|jsx?|mjs)$/, '');

/** A path with `*` (one folder name) as a regular expression over extension-less paths. */
const pattern = (p: string): RegExp =>
  new RegExp(`^${p.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[^/]+')}${p.endsWith('/') ? '' : '$'}`);

/** The layer of a repository path (`src/http/server.ts`), or undefined when no layer claims it. */
export function layerOf(path: string, rules: Layer[] = layers): string | undefined {
  const bare = withoutExtension(path);
  let best: { name: string; length: number } | undefined;
  for (const layer of rules) {
    for (const p of layer.paths) {
      const hit = p.includes('*') ? pattern(p).test(bare) : p.endsWith('/') ? bare.startsWith(p) : bare === p;
      if (hit && (!best || p.length > best.length)) best = { name: layer.name, length: p.length };
    }
  }
  return best?.name;
}

export interface Edge {
  /** The importing file, repository-relative. */
  from: string;
  /** The imported file as the specifier names it, repository-relative. */
  to: string;
  specifier: string;
}

/**
 * The module specifiers of one source: static and type-only imports,
 * re-exports, `import()` calls and `import('…')` types, side-effect imports.
 * TypeScript's own pre-processor reads them, so comments and strings that merely
 * look like imports are not counted.
 */
export const specifiersOf = (text: string): string[] =>
  ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);

/** Relative imports resolved against the importing file; packages and node: builtins are not edges. */
export function edgesOf(from: string, text: string): Edge[] {
  return specifiersOf(text)
    .filter((s) => s.startsWith('./') || s.startsWith('../'))
    .map((specifier) => ({ from, specifier, to: posix.normalize(posix.join(posix.dirname(from), specifier)) }));
}

function sources(root: string, dir: string): string[] {
  return readdirSync(posix.join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const path = posix.join(dir, e.name);
    if (e.isDirectory()) return sources(root, path);
    return /\.tsx?$/.test(e.name) ? [path] : [];
  });
}

/** Every source file under `root`/src and the relative imports it makes. */
export function importGraph(root: string): { files: string[]; edges: Edge[] } {
  const files = sources(root, 'src');
  return { files, edges: files.flatMap((f) => edgesOf(f, readFileSync(posix.join(root, f), 'utf8'))) };
}

/** One line per file no layer claims and per import the rule refuses. */
export function violations(graph: { files: string[]; edges: Edge[] }, rules: Layer[] = layers): string[] {
  const out: string[] = [];
  for (const f of graph.files) if (!layerOf(f, rules)) out.push(`${f}: no layer claims this file`);
  const allowed = new Map(rules.map((l) => [l.name, new Set(l.mayImport)]));
  for (const e of graph.edges) {
    const from = layerOf(e.from, rules);
    if (!from) continue;
    const to = layerOf(e.to, rules);
    if (from === to) continue;
    if (!to) out.push(`${e.from}: imports '${e.specifier}', outside every layer`);
    else if (!allowed.get(from)!.has(to)) out.push(`${e.from}: ${from} may not import ${to} ('${e.specifier}')`);
  }
  return out;
}
