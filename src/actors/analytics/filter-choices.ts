/**
 * The logs views' filter choices (GET /admin/logs/filters, /v1/logs/filters):
 * the values each dimension takes in a window, with their request counts,
 * from the rollups (src/storage/clickhouse/log-facets.ts). A master sees its
 * own records only.
 */
import { badRequest } from '../../errors.js';
import type { Principal } from '../../contract/principal.js';
import type { ClickHouseReader } from '../../storage/clickhouse/client.js';
import { queryFacets, type FacetFilter } from '../../storage/clickhouse/log-facets.js';
import { OPEN_END } from '../../storage/clickhouse/log-counts.js';

export const FACET_LIMIT_DEFAULT = 20;
export const FACET_LIMIT_MAX = 100;

export interface FilterChoicesQuery extends FacetFilter {
  since?: number;
  until?: number;
  limit?: number;
}

export async function filterChoices(ch: ClickHouseReader, q: FilterChoicesQuery, principal: Principal) {
  const since = q.since ?? 0;
  const until = q.until ?? OPEN_END; // open-ended: the end of log time (2100-01-01) stands for it
  if (until <= since) throw badRequest('until must be after since', { until: 'must be greater than since' });
  const limit = Math.min(q.limit ?? FACET_LIMIT_DEFAULT, FACET_LIMIT_MAX);
  const filter: FacetFilter = { master_id: q.master_id, key_id: q.key_id, model: q.model, group: q.group };
  // A tenant's own records only: a scope on every dimension (a filter would not narrow its own dimension).
  const scope = principal.type === 'master' ? { master_id: principal.id } : undefined;
  if (scope) delete filter.master_id;
  const { total, dims } = await queryFacets(ch, { since, until, filter, limit, ...(scope ? { scope } : {}) });
  return {
    since,
    until: q.until ?? null,
    limit,
    total,
    masters: dims.master_id,
    keys: dims.key_id,
    models: dims.model,
    groups: dims.group,
    status_classes: dims.status_class,
  };
}
