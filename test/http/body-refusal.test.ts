/**
 * A body refused for its size is read to its end and dropped before the 413
 * is sent (src/http/body-reader.ts, DRAIN_BYTES), so a client still sending
 * when the server decides reads the answer instead of a reset connection. Over
 * plain sockets, with the body written only after the server has seen the head
 * (the moment an early answer and close would reset it), declared and chunked;
 * a body declared past DRAIN_BYTES is answered at once and cut.
 */
import t from 'tap';
import { startTestService } from '../helpers/harness.js';
import { RawConnection, head } from '../helpers/raw-http.js';
import { DRAIN_BYTES } from '../../src/http/body-reader.js';

const svc = await startTestService();
t.teardown(() => svc.stop());
const port = svc.service.port;
const MiB = 1024 * 1024;
/** PUT /admin/features takes bodies up to 1 MiB. */
const features = (headers: Record<string, string>) =>
  head('PUT', '/admin/features', { authorization: 'Bearer test-admin-token', 'content-type': 'application/json', ...headers });

t.test('a declared body over the limit: read to its end, then 413 in the envelope', async (t) => {
  const conn = new RawConnection(port);
  t.teardown(() => conn.close());
  const body = 'x'.repeat(3 * MiB);
  // The head first, read by the server (which decides there), then the body in pieces.
  await conn.send(features({ 'content-length': String(body.length) }), body.slice(0, MiB), body.slice(MiB, 2 * MiB));
  await t.rejects(conn.answer(300), /no answer/, 'no answer while the body is still coming');
  await conn.send(body.slice(2 * MiB));
  const answer = await conn.answer();
  t.match(answer, { status: 413 }, 'answered, not reset');
  if (!('closed' in answer)) t.match(JSON.parse(answer.body), { code: 'payload_too_large', data: { limit: MiB } });
  t.same(await conn.answer(), { closed: 'closed' }, 'then closed');
});

t.test('a chunked body over the limit: read to its last chunk, then 413', async (t) => {
  const conn = new RawConnection(port);
  t.teardown(() => conn.close());
  const chunk = (s: string) => `${s.length.toString(16)}\r\n${s}\r\n`;
  const piece = 'y'.repeat(700 * 1024);
  await conn.send(features({ 'transfer-encoding': 'chunked' }), chunk(piece), chunk(piece), chunk(piece));
  await t.rejects(conn.answer(300), /no answer/, 'over the limit, and no answer before the last chunk');
  await conn.send('0\r\n\r\n');
  t.match(await conn.answer(), { status: 413 }, 'answered after the last chunk');
});

t.test(`a body declared past ${DRAIN_BYTES / MiB} MiB is answered at once and cut`, async (t) => {
  const conn = new RawConnection(port);
  t.teardown(() => conn.close());
  await conn.send(features({ 'content-length': String(DRAIN_BYTES + 1) }));
  t.match(await conn.answer(), { status: 413 }, 'answered before any of the body');
  t.same(await conn.answer(), { closed: 'closed' }, 'and closed');
  t.equal((await svc.request('GET', '/status')).status, 200, 'the service goes on serving');
});
