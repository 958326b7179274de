/**
 * CSV export of the log lists (admin: any records; master: its own). The
 * filters are the lists' own, so an export holds exactly the `total` records
 * the list reports for them; the body is streamed from ClickHouse with no row cap.
 */
import { Streamed, handlerRoute, type Route } from '../route.js';
import type { RouteInput } from '../../contract/input.js';
import type { AppContext } from '../context.js';
import type { JSONSchema } from '../../contract/validate.js';
import { logs } from '../../actors/logs/handles.js';

const columns =
  'id, created_at, master_id, key_id, group, model, status_code, latency_ms, tokens_in, tokens_out, request_size, ' +
  'response_size, client_ip, error_message, audit_reason, request_body, response_body, updated_at';

const csv: JSONSchema = {
  type: 'string',
  description: `CSV (RFC 4180) with a header line: ${columns}; times in UTC as \`YYYY-MM-DD hh:mm:ss.sss\`; newest first`,
};

/** `logs-20261125T145000Z.csv`: when the export was asked for. */
const fileName = (now: number): string => `logs-${new Date(now).toISOString().slice(0, 19).replace(/[-:]/g, '')}Z.csv`;

const exportRoute = (path: string, role: 'admin' | 'master', summary: string, tag: string): Route =>
  handlerRoute({
    method: 'GET',
    path,
    role,
    summary,
    tags: [tag],
    // The list's filters without its paging: the export's handle declares them.
    query: logs.export.input.query,
    produces: 'text/csv; charset=utf-8',
    success: { status: 200, schema: csv, description: 'streamed (chunked); ends early with a closed connection if the store fails midway' },
    handler: async (input: RouteInput, app: AppContext) => {
      const body = await app.ask<AsyncIterableIterator<Uint8Array>>(logs.export.actor, logs.export.message, input);
      return new Streamed(body, {
        'Content-Disposition': `attachment; filename="${fileName(app.now())}"`,
        'Cache-Control': 'no-store',
      });
    },
  });

export const logExportRoutes: Route[] = [
  exportRoute('/admin/logs/export', 'admin', 'Every log record matching the list filters, as CSV streamed from the store (no row cap)', 'logs'),
  exportRoute('/v1/logs/export', 'master', "The tenant's own log records as CSV (same filters as /v1/logs; master_id is always the caller)", 'tenant'),
];
