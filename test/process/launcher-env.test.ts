/**
 * glibc reads MALLOC_MMAP_THRESHOLD_ only at process start, so the launchers
 * set it (docs/performance.md, "Memory"): the Dockerfile, the npm start
 * scripts and the bench's service launcher must agree.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { launcherEnv } from '../../src/bench/harness/service.js';

const read = (p: string): string => readFileSync(fileURLToPath(new URL(`../../../${p}`, import.meta.url)), 'utf8');

t.test('the Dockerfile, npm start and the bench launch the service with the same malloc threshold', async (t) => {
  const value = launcherEnv.MALLOC_MMAP_THRESHOLD_;
  t.equal(value, '1048576');
  t.match(read('Dockerfile'), new RegExp(`^ENV .*\\bMALLOC_MMAP_THRESHOLD_=${value}\\b`, 'm'));
  const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
  // An operator's own value wins.
  t.match(scripts['start:prod'], `MALLOC_MMAP_THRESHOLD_=\${MALLOC_MMAP_THRESHOLD_:-${value}} exec node dist/src/main.js`, 'start:prod');
  t.equal(scripts.start, 'exec scripts/start.sh', 'start runs the launcher');
  t.match(read('scripts/start.sh'), `export MALLOC_MMAP_THRESHOLD_="\${MALLOC_MMAP_THRESHOLD_:-${value}}"`, 'the launcher');
});
