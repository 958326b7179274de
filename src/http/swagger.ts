/**
 * Interactive documentation from swagger-ui-dist, served from memory (no CDN):
 * the page, its assets and the generated OpenAPI document.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { notFound } from '../errors.js';
import { Reply, handlerRoute, type Route } from './route.js';

const require = createRequire(import.meta.url);
const assetDir = (require('swagger-ui-dist') as { getAbsoluteFSPath(): string }).getAbsoluteFSPath();

const assetTypes: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'index.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

const indexHtml = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Gateway control plane API</title>
  <link rel="stylesheet" href="./swagger-ui.css">
  <link rel="stylesheet" href="./index.css">
  <link rel="icon" type="image/png" href="./favicon-32x32.png" sizes="32x32">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="./swagger-ui-bundle.js"></script>
  <script src="./swagger-ui-standalone-preset.js"></script>
  <script src="./swagger-init.js"></script>
</body>
</html>
`;

// validatorUrl null: by default the page embeds a badge from validator.swagger.io, which sends the document's
// address to a third party online and shows a broken image offline. Nothing on the page is fetched from elsewhere.
const initJs = `window.ui = SwaggerUIBundle({
  url: './doc.json',
  validatorUrl: null,
  dom_id: '#swagger-ui',
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'StandaloneLayout'
});
`;

/** The swagger routes; `document` is computed after every route is known. */
export function swaggerRoutes(document: () => Record<string, unknown>): Route[] {
  const assets = new Map<string, Buffer>();
  const asset = (name: string): Buffer => {
    let data = assets.get(name);
    if (!data) assets.set(name, (data = readFileSync(join(assetDir, name))));
    return data;
  };
  let docText: string | undefined;
  const base = { role: 'public' as const, tags: ['documentation'], method: 'GET' as const };
  return [
    handlerRoute({
      ...base,
      path: '/swagger/index.html',
      summary: 'Interactive API documentation',
      produces: 'text/html; charset=utf-8',
      success: { status: 200, schema: { type: 'string' } },
      handler: () => indexHtml,
    }),
    handlerRoute({
      ...base,
      path: '/swagger/doc.json',
      summary: 'OpenAPI 3.1 document of every route',
      produces: 'application/json',
      success: { status: 200, schema: { type: 'object' } },
      handler: () => (docText ??= JSON.stringify(document())),
    }),
    handlerRoute({
      ...base,
      path: '/swagger/{file}',
      summary: 'Assets of the documentation page',
      params: { type: 'object', properties: { file: { type: 'string' } }, required: ['file'] },
      produces: 'application/octet-stream',
      success: { status: 200, schema: { type: 'string' } },
      handler: ({ params }) => {
        const file = (params as { file: string }).file;
        if (file === 'swagger-init.js') return new Reply(200, initJs, { 'Content-Type': 'application/javascript; charset=utf-8' });
        const type = assetTypes[file];
        if (!type) throw notFound('file', { file });
        return new Reply(200, asset(file), { 'Content-Type': type, 'Cache-Control': 'public, max-age=86400' });
      },
    }),
  ];
}
