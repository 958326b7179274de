/**
 * Measurements are identified by their date and commit, never by a count of work periods: no page, bench note or
 * source comment counts work periods by ordinal (the word itself stays fine for chDB and Postgres
 * sessions and the console's sign-in).
 */
import t from 'tap';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const ordinal = /\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|last|previous|this|earlier|later) (work )?(session|work period)s?\b/i;

function files(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    return statSync(join(root, path)).isDirectory() ? files(path) : /\.(md|json|ts|tsx|mjs|sh)$/.test(name) ? [path] : [];
  });
}

t.test('no document, bench note or source comment counts work periods', async (t) => {
  const offenders: string[] = [];
  for (const path of ['README.md', ...files('docs'), ...files('bench'), ...files('src'), ...files('scripts')]) {
    readFileSync(join(root, path), 'utf8').split('\n').forEach((line, i) => {
      if (ordinal.test(line)) offenders.push(`${path}:${i + 1}: ${line.trim()}`);
    });
  }
  t.same(offenders, [], 'measurements are named by date and commit');
  // The performance page in particular: its history was once headed by such counts.
  t.notMatch(readFileSync(join(root, 'docs/performance.md'), 'utf8'), /session/i, 'docs/performance.md does not speak of sessions at all');
});
