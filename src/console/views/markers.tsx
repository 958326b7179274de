/**
 * Configuration changes (prices, weights, keys disabled, flags...) from the
 * audit trail, drawn on the time charts so "what changed just before this
 * spike" is one look.
 */
import { api } from '../session';
import { useApi, type Loaded } from '../ui/hooks';
import { Time } from '../ui/components';
import type { Marker } from '../ui/chart';

/** The resources whose changes alter traffic: prices, weights, keys, routing, flags, tenants. */
const configResources = 'provider-groups,api-keys,models,model-registry,bindings,namespaces,features,masters,keys';

export function useAuditMarkers(since: number, until: number): Loaded<Marker[]> {
  return useApi(async (signal) => {
    const page = await api.get('/admin/audit', { query: { since, until, resource: configResources, limit: 200 }, signal });
    return page.items
      .filter((i) => i.time)
      .map((i) => ({
        t: Math.floor(new Date(i.time!).getTime() / 1000),
        label: `${i.actor_role ?? ''} ${i.action ?? i.method ?? ''} ${i.resource ?? ''}${i.resource_id ? ` #${i.resource_id}` : ''}`.trim(),
      }));
  }, [since, until]);
}

export function MarkerList({ markers }: { markers: Loaded<Marker[]> }) {
  const list = markers.data ?? [];
  if (markers.error) return <p class="muted">Configuration changes could not be read: {markers.error.message}</p>;
  if (list.length === 0) return <p class="muted markers">No configuration changes in this window.</p>;
  return (
    <details class="markers">
      <summary>
        {list.length} configuration change{list.length === 1 ? '' : 's'} in this window (red dashed lines)
      </summary>
      <ul>
        {list.slice(0, 50).map((m, i) => (
          <li key={i}>
            <Time t={m.t} /> {m.label}
          </li>
        ))}
      </ul>
    </details>
  );
}
