/**
 * Operations: health of the three stores, data-plane sync (nodes, versions,
 * lag, outbox), the log pipeline's dead letters (replay, delete) and the
 * audit trail with masked diffs.
 */
import { api } from '../session';
import { setQuery, useLocation } from '../router';
import { Async, Badge, Num, Pager, Table, Tile, Time } from '../ui/components';
import { useApi } from '../ui/hooks';
import { DeadLetters } from './dead-letters';
import { AuditChange } from './audit-change';

export function Operations() {
  const { query } = useLocation();
  // /health answers 503 with the same body when a store is down: show it rather than an error.
  const health = useApi((signal) => api.get('/health', { signal, accept: [503] }), [], 10000);
  const sync = useApi((signal) => api.get('/admin/sync/status', { signal }), [], 10000);
  const resource = query.get('resource') ?? '';
  const actor = query.get('actor') ?? '';
  const offset = Number(query.get('offset')) || 0;
  const limit = 50;
  const audit = useApi(
    (signal) => api.get('/admin/audit', { query: { resource: resource || undefined, actor: actor || undefined, limit, offset }, signal }),
    [resource, actor, offset],
  );
  return (
    <section>
      <h1>Operations</h1>
      <h2>Health</h2>
      <Async state={health}>
        {(h) => (
          <div class="tiles" data-testid="health">
            <Tile label="Service" value={<Badge value={h.status} />} sub={`up ${h.uptime}`} />
            <Tile label="Postgres" value={<Badge value={h.database} />} />
            <Tile label="Redis" value={<Badge value={h.store} />} />
            <Tile label="ClickHouse" value={<Badge value={h.clickhouse} />} />
          </div>
        )}
      </Async>
      <h2>Data-plane sync</h2>
      <Async state={sync}>
        {(s) => (
          <>
            <div class="tiles">
              <Tile label="Config version" value={<Num n={s.config_version} />} sub={s.config_updated_at ? <Time t={s.config_updated_at} /> : undefined} />
              <Tile label="Outbox pending" value={<Num n={s.outbox.pending} />} sub={s.outbox.oldest_pending_at ? <>oldest <Time t={s.outbox.oldest_pending_at} /></> : undefined} />
              <Tile label="Outbox dead-lettered" value={<Num n={s.outbox.dead} />} />
              <Tile label="Delivered since start" value={<Num n={s.outbox.delivered_since_start} />} sub={s.outbox.last_delivery_at ? <>last <Time t={s.outbox.last_delivery_at} /></> : undefined} />
              <Tile label="Shared store" value={s.outbox.store_reachable === false ? <Badge value="down" /> : <Badge value="up" />} />
            </div>
            {s.nodes.length === 0 ? (
              <p class="state empty">No data-plane node has reported yet.</p>
            ) : (
              <Table
                label="data-plane nodes"
                rows={s.nodes}
                rowKey={(n) => n.node_id ?? ''}
                columns={[
                  { title: 'Node', cell: (n) => n.node_id },
                  { title: 'Applied version', cell: (n) => <Num n={n.applied_version} /> },
                  { title: 'Lag', cell: (n) => <span class={(n.lag ?? 0) > 0 ? 'bad' : 'good'}>{n.lag}</span> },
                  { title: 'Last seen', cell: (n) => <Time t={n.last_seen_at} /> },
                  { title: 'Seconds since', cell: (n) => <Num n={n.seconds_since_seen} /> },
                ]}
              />
            )}
          </>
        )}
      </Async>
      <h2>Dead letters</h2>
      <DeadLetters />
      <h2>Audit trail</h2>
      <form
        class="toolbar"
        aria-label="audit filters"
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          setQuery({ resource: String(f.get('resource') ?? '').trim(), actor: String(f.get('actor') ?? '').trim(), offset: undefined }, { push: true });
        }}
      >
        <label>
          Resource <input name="resource" placeholder="masters, features…" defaultValue={resource} />
        </label>
        <label>
          Actor <input name="actor" placeholder="admin, master:7" defaultValue={actor} />
        </label>
        <button type="submit">Filter</button>
      </form>
      <Async state={audit} empty={(a) => (a.total === 0 ? 'No changes recorded.' : false)}>
        {(a) => (
          <>
            <Pager total={a.total} offset={offset} limit={limit} onOffset={(o) => setQuery({ offset: o || undefined }, { push: true })} />
            <Table
              label="audit trail"
              rows={a.items}
              rowKey={(i) => `${i.request_id}:${i.time}`}
              columns={[
                { title: 'Time', cell: (i) => <Time t={i.time} /> },
                { title: 'Actor', cell: (i) => `${i.actor_role ?? ''}${i.actor_id ? `:${i.actor_id}` : ''}` },
                { title: 'Action', cell: (i) => i.action ?? i.method },
                { title: 'Resource', cell: (i) => `${i.resource ?? ''}${i.resource_id ? ` #${i.resource_id}` : ''}` },
                { title: 'Status', cell: (i) => i.status },
                { title: 'Change (secrets masked)', cell: (i) => <AuditChange entry={i} /> },
              ]}
            />
          </>
        )}
      </Async>
    </section>
  );
}
