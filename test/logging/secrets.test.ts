import t from 'tap';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/logger.js';

const capture = () => {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { log: createLogger('info', stream), lines };
};

t.test('secret fields are redacted wherever a caller logs them', async (t) => {
  const { log, lines } = capture();
  log.info({ api_key: 'sk-up-1', body: { key_secret: 'sk-child', master_key: 'mk-1', refresh_token: 'rt', access_token: 'at', secret: 's' }, authorization: 'Bearer x' }, 'hello');
  const text = lines.join('');
  for (const s of ['sk-up-1', 'sk-child', 'mk-1', '"rt"', '"at"', 'Bearer x']) t.notMatch(text, s, `${s} not logged`);
  t.match(text, /\[redacted\]/);
});

t.test('errors are logged without driver details that may carry bound values', async (t) => {
  const { log, lines } = capture();
  const err = Object.assign(new Error('duplicate key value violates unique constraint'), {
    code: '23505',
    detail: 'Key (api_key)=(sk-leaky-secret) already exists.',
    values: ['sk-leaky-secret'],
  });
  log.error({ err }, 'failed');
  const text = lines.join('');
  t.notMatch(text, 'sk-leaky-secret');
  t.match(text, '23505', 'the code is kept for diagnosis');
  t.match(text, 'duplicate key value');
});
