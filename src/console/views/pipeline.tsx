/**
 * How fresh and how complete the charted data is: the newest stored record,
 * what is still pending, and what the store refused (dead letters), so that
 * nobody reads a partial picture as the whole. The admin reads the log
 * pipeline (which has all three); a tenant reads its own newest record.
 */
import { api } from '../session';
import { useApi, type Loaded } from '../ui/hooks';
import { Badge, ErrorBox, Loading, Num, Tile, Time } from '../ui/components';
import type { Success } from '../api/client';

type Pipeline = Success<'/admin/logs/pipeline', 'get'>;
type Fresh = Success<'/v1/logs/freshness', 'get'>;

export const usePipeline = (): Loaded<Pipeline> => useApi((signal) => api.get('/admin/logs/pipeline', { signal }), [], 10000);
export const useOwnFreshness = (): Loaded<Fresh> => useApi((signal) => api.get('/v1/logs/freshness', { signal }), [], 10000);

/** One line under a chart: data up to the newest stored record, and (admin) what is not in it yet. */
export function Freshness({ state }: { state: Loaded<Pipeline> | Loaded<Fresh> }) {
  const d = state.data;
  if (state.error) return <p class="freshness muted">Freshness unknown: {state.error.message}</p>;
  if (!d) return null;
  const newest = 'newest_stored_at' in d ? d.newest_stored_at : d.newest_record_at;
  const p = 'pending' in d ? d : undefined;
  return (
    <p class="freshness muted" data-testid="freshness">
      Data up to {newest ? <Time t={newest} /> : 'no stored record yet'}
      {p && p.pending > 0 && <> · {p.pending.toLocaleString()} records pending</>}
      {p && p.dead_lettered > 0 && <strong class="bad"> · {p.dead_lettered.toLocaleString()} records refused by the store (dead letters), not counted</strong>}
    </p>
  );
}

export function PipelineTiles({ state }: { state: Loaded<Pipeline> }) {
  const p = state.data;
  if (state.error && !p) return <ErrorBox error={state.error} onRetry={state.reload} />;
  if (!p) return <Loading what="the log pipeline" />;
  return (
    <div class="tiles" data-testid="pipeline">
      <Tile label="Log pipeline" value={<Badge value={p.status} />} sub={p.last_error ? `${p.last_error.code}: ${p.last_error.message}` : 'no failed insert'} />
      <Tile label="Accepted (this node)" value={<Num n={p.accepted} compact />} />
      <Tile label="Stored (this node)" value={<Num n={p.stored} compact />} />
      <Tile label="Pending" value={<Num n={p.pending} />} />
      <Tile label="Dead-lettered" value={<span class={p.dead_lettered ? 'bad' : ''}><Num n={p.dead_lettered} /></span>} sub="refused by the store" />
      <Tile label="Newest stored" value={p.newest_stored_at ? <Time t={p.newest_stored_at} /> : '–'} />
    </div>
  );
}
