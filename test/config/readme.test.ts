import t from 'tap';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { settingSpecs } from '../../src/config/settings.js';

t.test('the README documents every setting, with its file name and default', async (t) => {
  const readme = readFileSync(fileURLToPath(new URL('../../../README.md', import.meta.url)), 'utf8');
  for (const spec of Object.values(settingSpecs)) {
    const row = readme.split('\n').find((l) => l.startsWith(`| ${spec.env} |`));
    t.ok(row, `${spec.env} has a row`);
    if (!row) continue;
    t.match(row, `| ${spec.key} |`, `${spec.env} names its file key`);
    if ('default' in spec) t.match(row, `| ${String(spec.default)} |`, `${spec.env} shows its default`);
  }
});
