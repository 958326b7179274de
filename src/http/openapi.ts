/**
 * The OpenAPI 3.1 document, generated from the route table: the same schemas
 * that validate and serialize are the ones documented.
 */
import { takesNdjson, type Route } from './route.js';
import { errorEnvelope } from './schema.js';
import { MAX_TARGET_BYTES } from './head-limit.js';
import type { JSONSchema } from '../contract/validate.js';
import type { BuildInfo } from '../version.js';
import type { Role } from './auth.js';
import { errorStatus } from '../errors.js';

const security: Record<Role, Array<Record<string, string[]>>> = {
  public: [],
  admin: [{ AdminAuth: [] }],
  internal: [{ InternalToken: [] }],
  admin_or_internal: [{ AdminAuth: [] }, { InternalToken: [] }],
  master: [{ MasterAuth: [] }],
  identify: [{ AdminAuth: [] }, { MasterAuth: [] }, { KeyAuth: [] }],
};

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

function parameters(schema: JSONSchema | undefined, where: 'path' | 'query'): unknown[] {
  if (!schema) return [];
  const props = (schema.properties ?? {}) as Record<string, JSONSchema>;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  return Object.entries(props).map(([name, s]) => ({
    name,
    in: where,
    required: where === 'path' || required.has(name),
    ...(s.description ? { description: s.description } : {}),
    schema: s,
  }));
}

export function buildOpenApi(routes: Route[], build: BuildInfo): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const responses: Record<string, unknown> = {
      [String(r.success.status)]: r.success.schema
        ? {
            description: r.success.description ?? 'success',
            content: { [r.produces ?? 'application/json']: { schema: r.success.schema } },
          }
        : { description: r.success.description ?? 'success' },
      400: errorResponse('invalid body or parameter'),
      ...(r.role !== 'public' ? { 401: errorResponse('credential missing or invalid'), 429: errorResponse('too many failed authentications') } : {}),
      ...(r.params ? { 404: errorResponse('not found') } : {}),
      414: errorResponse(`URL (path and query) longer than ${MAX_TARGET_BYTES} bytes`),
      500: errorResponse('internal failure'),
      503: errorResponse('a store is down (data.store names it) or the service is busy; retry after Retry-After'),
    };
    if (r.method !== 'GET') {
      responses[413] = errorResponse('body too large');
      responses[415] = errorResponse('a body not sent as JSON (or NDJSON where accepted)');
    }
    const op: Record<string, unknown> = {
      operationId: `${r.method.toLowerCase()}${r.path.replace(/[{}]/g, '').replace(/[^a-zA-Z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      summary: r.summary,
      ...(r.description ? { description: r.description } : {}),
      tags: r.tags,
      security: security[r.role],
      parameters: [...parameters(r.params, 'path'), ...parameters(r.query, 'query')],
      responses,
    };
    if (r.body) {
      const content: Record<string, unknown> = { 'application/json': { schema: r.body } };
      if (takesNdjson(r)) content['application/x-ndjson'] = { schema: { type: 'string', description: 'one JSON record per line' } };
      op.requestBody = { required: true, content };
    }
    (paths[r.path] ??= {})[r.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Gateway control plane', version: build.version, description: build.description },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas: {
        Error: {
          ...errorEnvelope,
          properties: { ...(errorEnvelope.properties as Record<string, JSONSchema>), code: { type: 'string', enum: Object.keys(errorStatus) } },
        },
      },
      securitySchemes: {
        AdminAuth: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'Bearer <SVC_ADMIN_TOKEN>' },
        MasterAuth: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'Bearer <master key>' },
        KeyAuth: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'Bearer <child key>' },
        InternalToken: { type: 'apiKey', in: 'header', name: 'X-Internal-Token' },
      },
    },
  };
}
