/**
 * How the console is served: GET / redirects to it, the page is never cached
 * and carries a same-origin Content-Security-Policy, deep links answer the
 * page, hashed assets are cached for a year and sent brotli or gzip as the
 * client accepts, and the build kept the bundle within its budget.
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { startTestService } from '../helpers/harness.js';
import { chooseEncoding } from '../../src/http/console.js';

const svc = await startTestService();
t.teardown(() => svc.stop());

const raw = (path: string, headers: Record<string, string> = {}) => fetch(svc.base + path, { headers, redirect: 'manual' });

t.test('GET / redirects to the console', async (t) => {
  const r = await raw('/');
  t.equal(r.status, 302);
  t.equal(r.headers.get('location'), '/console/');
});

t.test('the page: no-cache, same-origin CSP, deep links', async (t) => {
  for (const path of ['/console/', '/console/logs', '/console/tenants/12']) {
    const r = await raw(path, { 'accept-encoding': 'identity' });
    t.equal(r.status, 200, path);
    t.match(r.headers.get('content-type'), /^text\/html/);
    t.equal(r.headers.get('cache-control'), 'no-cache', `${path} is revalidated every time`);
    const csp = r.headers.get('content-security-policy') ?? '';
    t.match(csp, /default-src 'self'/);
    t.match(csp, /script-src 'self'(;|$)/, 'scripts from this origin only');
    t.match(csp, /connect-src 'self'/);
    t.notMatch(csp, /https?:/, 'no other origin is named');
    const html = await r.text();
    t.match(html, /<script type="module" src="\/console\/assets\/app-[A-Z0-9]+\.js">/);
    t.notMatch(html, /https?:\/\//, 'the page references no other origin');
  }
});

t.test('assets: hashed names cached for a year, brotli or gzip as accepted', async (t) => {
  const html = await (await raw('/console/')).text();
  const js = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)![1]!;
  const css = /href="(\/console\/assets\/[^"]+\.css)"/.exec(html)![1]!;
  const plain = await raw(js, { 'accept-encoding': 'identity' });
  t.equal(plain.status, 200);
  t.equal(plain.headers.get('content-encoding'), null);
  t.match(plain.headers.get('cache-control'), /max-age=31536000/);
  t.match(plain.headers.get('content-type'), /javascript/);
  t.equal(plain.headers.get('vary'), 'Accept-Encoding');
  const body = Buffer.from(await plain.arrayBuffer());

  // Node's fetch decodes what it gets: read the raw bytes with a request that does not.
  const rawBytes = async (path: string, enc: string) => {
    const { request } = await import('node:http');
    return new Promise<{ enc: string | undefined; data: Buffer }>((resolve, reject) => {
      const u = new URL(svc.base + path);
      request({ host: u.hostname, port: u.port, path: u.pathname, headers: { 'accept-encoding': enc } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ enc: res.headers['content-encoding'], data: Buffer.concat(chunks) }));
      }).on('error', reject).end();
    });
  };
  const br = await rawBytes(js, 'gzip, deflate, br');
  t.equal(br.enc, 'br', 'brotli preferred when accepted');
  t.ok(brotliDecompressSync(br.data).equals(body), 'brotli copy is the same file');
  t.ok(br.data.length < body.length / 2);
  const gz = await rawBytes(js, 'gzip');
  t.equal(gz.enc, 'gzip');
  t.ok(gunzipSync(gz.data).equals(body), 'gzip copy is the same file');
  const cssRes = await raw(css);
  t.match(cssRes.headers.get('content-type'), /text\/css/);
  t.equal((await raw('/console/assets/nope.js')).status, 404);
});

t.test('encoding choice', async (t) => {
  t.equal(chooseEncoding('gzip, deflate, br'), 'br');
  t.equal(chooseEncoding('br;q=0, gzip'), 'gzip');
  t.equal(chooseEncoding('*'), 'br');
  t.equal(chooseEncoding(''), 'identity');
  t.equal(chooseEncoding(undefined), 'identity');
  t.equal(chooseEncoding('gzip;q=0'), 'identity');
});

t.test('the build measured the initial bundle within its budget', async (t) => {
  const build = JSON.parse(readFileSync('dist/console/build.json', 'utf8')) as { initial_gzip_bytes: number; budget_gzip_bytes: number };
  t.equal(build.budget_gzip_bytes, 150 * 1024);
  t.ok(build.initial_gzip_bytes > 0 && build.initial_gzip_bytes <= build.budget_gzip_bytes, `${build.initial_gzip_bytes} bytes gzipped`);
});

t.test('the console routes are in the OpenAPI document', async (t) => {
  const doc = (await svc.request('GET', '/swagger/doc.json')).json as { paths: Record<string, unknown> };
  t.ok(doc.paths['/console/'], '/console/');
  t.ok(doc.paths['/console/assets/{file}']);
});
