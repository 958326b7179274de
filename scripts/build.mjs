// Compiles TypeScript to dist/ and injects the version: SVC_BUILD_VERSION when
// given, else `git describe`, else package.json's version; then builds the
// operator console into dist/console (scripts/console-build.mjs).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { buildConsole } from './console-build.mjs';

const run = (cmd, args) => {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
};

execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', '.'], { stdio: 'inherit' });

const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
const commit = run('git', ['rev-parse', '--short', 'HEAD']) || 'unknown';
const version = process.env.SVC_BUILD_VERSION || `${pkg.version}+${commit}`;
mkdirSync('dist', { recursive: true });
await buildConsole({ name: pkg.name, version, description: pkg.description ?? '', repository: pkg.repository?.url ?? '', commit });
// Written last: scripts/start.sh compares sources with this file, and the console build writes a source (its API types).
writeFileSync('dist/build-info.json', JSON.stringify({ version, commit }) + '\n');
console.log(`built ${pkg.name} ${version}`);
