/**
 * Request bodies over real sockets: the cap on bytes held by unfinished
 * bodies (SVC_BODY_MEMORY_BYTES) and the JSON media type every body needs.
 */
import t from 'tap';
import net from 'node:net';
import { adminToken, eventually, startTestService } from '../helpers/harness.js';

const MiB = 1024 * 1024;

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The server closed the connection after answering. */
  closed: Promise<boolean>;
}

/** One request on its own socket; the head is sent now, the body by `send` (slowly, if the test wants). */
function open(port: number, head: string): { socket: net.Socket; response: Promise<RawResponse> } {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => undefined); // a refused upload may be cut off while still sending
  socket.write(head);
  const closed = new Promise<boolean>((resolve) => socket.once('close', () => resolve(true)));
  const response = new Promise<RawResponse>((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      buf = Buffer.concat([buf, chunk]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const lines = buf.subarray(0, end).toString().split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines.slice(1)) {
        const i = l.indexOf(':');
        headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
      }
      const length = Number(headers['content-length'] ?? 0);
      if (buf.length < end + 4 + length) return;
      socket.off('data', onData);
      resolve({ status: Number(lines[0]!.split(' ')[1]), headers, body: buf.subarray(end + 4, end + 4 + length).toString(), closed });
    };
    socket.on('data', onData);
    socket.once('close', () => reject(new Error(`closed before an answer (${buf.length} bytes)`)));
  });
  response.catch(() => undefined);
  return { socket, response };
}

/** A JSON array of one log record padded to exactly `size` bytes. */
function batchOf(size: number): Buffer {
  const shell = JSON.stringify([{ key_id: 1, master_id: 1, status_code: 200, model: 'm', request_body: '' }]);
  return Buffer.from(shell.replace('"request_body":""', `"request_body":"${'x'.repeat(size - shell.length)}"`));
}

const head = (length: number, type = 'application/json'): string =>
  `POST /logs HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\nContent-Length: ${length}\r\n\r\n`;

t.test('slow uploads past the body memory cap get 503 with Retry-After; the rest go on', async (t) => {
  const svc = await startTestService({ env: { SVC_BODY_MEMORY_BYTES: String(4 * MiB) } });
  t.teardown(() => svc.stop());
  const port = Number(new URL(svc.base).port);
  const body = batchOf(MiB); // four fill the 4 MiB exactly
  t.equal(body.length, MiB);
  const uploads = Array.from({ length: 12 }, () => open(port, head(body.length)));
  // Each sends a little and then stalls: bytes the service would hold without a cap.
  for (const u of uploads) u.socket.write(body.subarray(0, 100));

  const settled = await Promise.all(uploads.map((u) => Promise.race([u.response, new Promise<null>((r) => setTimeout(r, 1500, null))])));
  const refused = settled.filter((r): r is RawResponse => r !== null);
  t.equal(refused.length, 8, 'all but four were answered at once');
  for (const r of refused) {
    t.equal(r.status, 503);
    t.equal(r.headers['retry-after'], '1');
    const env = JSON.parse(r.body);
    t.equal(env.code, 'unavailable');
    t.same(env.data, { reason: 'body_memory' });
    t.ok(env.request_id);
    t.equal(await r.closed, true, 'the connection is closed: the rest of the body is not read');
  }

  t.equal((await svc.request('GET', '/health')).status, 200, 'the service answers other requests meanwhile');
  t.equal((await svc.request('GET', '/admin/features', { token: adminToken })).status, 200);
  const small = await svc.request('POST', '/logs', { body: { key_id: 1, master_id: 1, status_code: 200 } });
  t.equal(small.status, 503, 'no room left for another body while four are held');

  // The four held uploads finish and are accepted; their bytes are given back.
  const held = uploads.filter((_, i) => settled[i] === null);
  for (const u of held) u.socket.write(body.subarray(100));
  for (const u of held) {
    const r = await u.response;
    t.equal(r.status, 202, 'a held upload completes');
    t.equal(JSON.parse(r.body).accepted, 1);
    u.socket.destroy();
  }
  t.equal((await svc.request('POST', '/logs', { body: { key_id: 1, master_id: 1, status_code: 200 } })).status, 202, 'room again');
});

t.test('aborted uploads give their bytes back; chunked uploads are counted as they arrive', async (t) => {
  const svc = await startTestService({ env: { SVC_BODY_MEMORY_BYTES: String(2 * MiB) } });
  t.teardown(() => svc.stop());
  const port = Number(new URL(svc.base).port);
  const stalled = [open(port, head(MiB)), open(port, head(MiB))];
  for (const u of stalled) u.socket.write('[');
  await new Promise((r) => setTimeout(r, 300));
  t.equal((await svc.request('POST', '/logs', { body: { key_id: 1, master_id: 1, status_code: 200 } })).status, 503, 'full');
  for (const u of stalled) u.socket.destroy();
  const freed = await eventually(async () => (await svc.request('POST', '/logs', { body: { key_id: 1, master_id: 1, status_code: 200 } })).status === 202, 3000);
  t.ok(freed, 'the aborted uploads no longer count');

  // A chunked upload without a declared length: refused once what it sent passes the cap.
  const chunked = open(port, 'POST /logs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n');
  const piece = Buffer.alloc(512 * 1024, 0x20);
  for (let i = 0; i < 6; i++) chunked.socket.write(`${piece.length.toString(16)}\r\n${piece.toString()}\r\n`);
  const r = await chunked.response;
  t.equal(r.status, 503);
  t.equal(r.headers['retry-after'], '1');
  t.equal(await r.closed, true);
  t.equal((await svc.request('POST', '/logs', { body: { key_id: 1, master_id: 1, status_code: 200 } })).status, 202, 'its bytes were given back');
});

t.test('a body not sent as JSON is 415 unsupported_media_type, on every route with a body', async (t) => {
  const svc = await startTestService();
  t.teardown(() => svc.stop());
  const record = JSON.stringify({ key_id: 1, master_id: 1, status_code: 200 });
  const asType = (type: string | null): Record<string, string> => (type === null ? {} : { 'content-type': type });
  for (const type of ['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', null]) {
    const r = await svc.request('POST', '/logs', { rawBody: Buffer.from(record), headers: asType(type) });
    t.equal(r.status, 415, `POST /logs as ${type}`);
    t.equal(r.json.code, 'unsupported_media_type');
    t.same(r.json.data.accepted, ['application/json', 'application/x-ndjson']);
    t.ok(r.json.request_id);
  }
  for (const type of ['application/json', 'application/json; charset=utf-8', 'Application/JSON', 'application/vnd.gateway+json', 'application/x-ndjson']) {
    t.equal((await svc.request('POST', '/logs', { rawBody: Buffer.from(record), headers: asType(type) })).status, 202, `POST /logs as ${type}`);
  }
  const admin = { authorization: `Bearer ${adminToken}` };
  const master = JSON.stringify({ name: 'm', group: 'default' });
  const plain = await svc.request('POST', '/admin/masters', { rawBody: master, headers: { ...admin, 'content-type': 'text/plain' } });
  t.equal(plain.status, 415, 'admin routes too');
  t.same(plain.json.data.accepted, ['application/json']);
  t.equal((await svc.request('POST', '/admin/masters', { rawBody: master, headers: { ...admin, 'content-type': 'application/x-ndjson' } })).status, 415, 'NDJSON only where it is read');
  t.equal((await svc.request('POST', '/internal/stats/flush', { rawBody: '{"keys":[],"upstream_keys":[]}', headers: { 'x-internal-token': 'x', 'content-type': 'text/plain' } })).status, 415, 'before authentication');
  t.equal((await svc.request('POST', '/admin/masters', { rawBody: master, headers: { ...admin, 'content-type': 'application/json' } })).status, 201);
  const created = await svc.request('GET', '/admin/masters', { token: adminToken });
  t.equal(created.json.total, 1, 'the refused bodies changed nothing');
  t.equal((await svc.request('POST', `/admin/masters/${created.json.items[0].id}/freeze`, { token: adminToken })).status, 200, 'a request without a body needs no content type');

  const doc = (await svc.request('GET', '/swagger/doc.json')).json;
  t.ok(doc.components.schemas.Error.properties.code.enum.includes('unsupported_media_type'), 'the OpenAPI error codes list it');
  t.ok(doc.paths['/logs'].post.responses['415']);
});
