/**
 * The operator console, served from what `npm run build` left in dist/console:
 * the page (never cached, so a new build is picked up at once), its hashed
 * assets (cached for a year) in the encoding the browser prefers among the
 * precompressed brotli and gzip copies, and a Content-Security-Policy that
 * allows this origin only. Client-side routes (/console/logs, /console/tenants/7)
 * all answer the page; `GET /` redirects to the console.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { notFound, unavailable } from '../errors.js';
import { Reply, handlerRoute, type Route } from './route.js';

const consoleDir = fileURLToPath(new URL('../../console/', import.meta.url));

export const consoleCsp =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; " +
  "object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'";

const securityHeaders = {
  'Content-Security-Policy': consoleCsp,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

const types: Record<string, string> = {
  js: 'application/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
  json: 'application/json',
  map: 'application/json',
};

type Encoding = 'br' | 'gzip' | 'identity';

/** The encodings the client accepts, best first among those we hold (q=0 refuses one). */
export function chooseEncoding(acceptEncoding: string | undefined): Encoding {
  const accepted = new Map<string, number>();
  for (const part of (acceptEncoding ?? '').split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    accepted.set(name, q === undefined ? 1 : Number(q));
  }
  const ok = (n: string) => (accepted.get(n) ?? accepted.get('*') ?? 0) > 0;
  if (ok('br')) return 'br';
  if (ok('gzip')) return 'gzip';
  return 'identity';
}

interface Asset {
  type: string;
  identity: Buffer;
  br?: Buffer;
  gzip?: Buffer;
}

/** Reads the build once: every asset with its precompressed copies. */
function loadBuild(): { html: Asset; assets: Map<string, Asset> } | null {
  const htmlPath = join(consoleDir, 'index.html');
  if (!existsSync(htmlPath)) return null;
  const read = (path: string, type: string): Asset => ({
    type,
    identity: readFileSync(path),
    ...(existsSync(`${path}.br`) ? { br: readFileSync(`${path}.br`) } : {}),
    ...(existsSync(`${path}.gz`) ? { gzip: readFileSync(`${path}.gz`) } : {}),
  });
  const assets = new Map<string, Asset>();
  const assetDir = join(consoleDir, 'assets');
  for (const name of existsSync(assetDir) ? readdirSync(assetDir) : []) {
    if (name.endsWith('.br') || name.endsWith('.gz')) continue;
    assets.set(name, read(join(assetDir, name), types[name.split('.').pop()!] ?? 'application/octet-stream'));
  }
  return { html: read(htmlPath, 'text/html; charset=utf-8'), assets };
}

function encoded(asset: Asset, acceptEncoding: string | undefined, cacheControl: string): Reply {
  const want = chooseEncoding(acceptEncoding);
  const body = want === 'identity' ? undefined : asset[want];
  return new Reply(200, body ?? asset.identity, {
    'Content-Type': asset.type,
    'Cache-Control': cacheControl,
    Vary: 'Accept-Encoding',
    ...(body ? { 'Content-Encoding': want } : {}),
    ...securityHeaders,
  });
}

export function consoleRoutes(): Route[] {
  let build: ReturnType<typeof loadBuild> | undefined;
  const current = () => {
    build ??= loadBuild();
    if (!build) throw unavailable('the console is not built: run npm run build', 60);
    return build;
  };
  const base = { role: 'public' as const, tags: ['console'], method: 'GET' as const, headers: ['accept-encoding'] };
  const page = (summary: string, path: string, params?: string[]): Route =>
    handlerRoute({
      ...base,
      path,
      summary,
      ...(params
        ? { params: { type: 'object', properties: Object.fromEntries(params.map((p) => [p, { type: 'string' }])), required: params } }
        : {}),
      produces: 'text/html; charset=utf-8',
      success: { status: 200, schema: { type: 'string' } },
      handler: ({ headers }) => encoded(current().html, headers?.['accept-encoding'], 'no-cache'),
    });
  return [
    handlerRoute({
      method: 'GET',
      role: 'public',
      tags: ['console'],
      path: '/',
      summary: 'Redirects to the operator console',
      produces: 'text/plain; charset=utf-8',
      success: { status: 302, schema: null, description: 'redirect to /console/' },
      handler: () => new Reply(302, '', { Location: '/console/' }),
    }),
    page('The operator console (a page that signs in with the admin token or a master key)', '/console/'),
    page('A view of the operator console (deep link)', '/console/{view}', ['view']),
    page('A view of one item in the operator console (deep link)', '/console/{view}/{id}', ['view', 'id']),
    handlerRoute({
      ...base,
      path: '/console/assets/{file}',
      summary: "The console's scripts and styles (hashed names, cached for a year; brotli or gzip as accepted)",
      params: { type: 'object', properties: { file: { type: 'string' } }, required: ['file'] },
      produces: 'application/octet-stream',
      success: { status: 200, schema: { type: 'string' } },
      handler: ({ params, headers }) => {
        const file = (params as { file: string }).file;
        const asset = current().assets.get(file);
        if (!asset) throw notFound('file', { file });
        return encoded(asset, headers?.['accept-encoding'], 'public, max-age=31536000, immutable');
      },
    }),
  ];
}
