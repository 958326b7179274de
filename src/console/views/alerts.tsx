/**
 * Alerts: statistics, the list with status/severity/type filters and its
 * actions (acknowledge, resolve, dismiss), the thresholds editor, and the
 * log-error webhook's configuration with its recent deliveries.
 */
import { useState } from 'preact/hooks';
import { api } from '../session';
import { setQuery, useLocation } from '../router';
import { Async, Badge, ErrorBox, Field, Num, PagePager, Table, Tile, Time } from '../ui/components';
import { useAction, useApi } from '../ui/hooks';
import { ApiForm } from '../ui/form';

const statuses = ['active', 'acknowledged', 'resolved', 'dismissed'] as const;
const severities = ['info', 'warning', 'critical'] as const;
const types = ['traffic_spike', 'error_rate', 'upstream_failure', 'quota_exhausted', 'custom'] as const;
/** The address's value when it is one of the choices, else none (the API would refuse it). */
const oneOf = <T extends string>(choices: readonly T[], v: string): T | undefined => (choices as readonly string[]).includes(v) ? (v as T) : undefined;

export function Alerts() {
  const { query } = useLocation();
  const status = query.get('status') ?? '';
  const severity = query.get('severity') ?? '';
  const type = query.get('type') ?? '';
  const page = Math.max(1, Number(query.get('page')) || 1);
  const limit = 25;
  const stats = useApi((signal) => api.get('/admin/alerts/stats', { signal }), []);
  const list = useApi(
    (signal) => api.get('/admin/alerts', { query: { page, limit, status: oneOf(statuses, status), severity: oneOf(severities, severity), type: oneOf(types, type) }, signal }),
    [status, severity, type, page],
  );
  const act = useAction(async (id: number, action: 'acknowledge' | 'resolve' | 'dismiss') => {
    if (action === 'acknowledge') await api.post('/admin/alerts/{id}/acknowledge', { path: { id } });
    else if (action === 'resolve') await api.post('/admin/alerts/{id}/resolve', { path: { id } });
    else await api.post('/admin/alerts/{id}/dismiss', { path: { id } });
    list.reload();
    stats.reload();
  });
  const select = (name: string, value: string, options: readonly string[]) => (
    <label>
      {name}{' '}
      <select value={value} onChange={(e) => setQuery({ [name]: e.currentTarget.value, page: undefined }, { push: true })}>
        <option value="">any</option>
        {options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    </label>
  );
  return (
    <section>
      <h1>Alerts</h1>
      <Async state={stats}>
        {(s) => (
          <div class="tiles">
            <Tile label="Active" value={<Num n={s.by_status.active} />} />
            <Tile label="Acknowledged" value={<Num n={s.by_status.acknowledged} />} />
            <Tile label="Open critical" value={<Num n={s.open_by_severity.critical} />} />
            <Tile label="Open warning" value={<Num n={s.open_by_severity.warning} />} />
            <Tile label="All alerts" value={<Num n={s.total} />} />
          </div>
        )}
      </Async>
      <div class="toolbar" role="group" aria-label="alert filters">
        {select('status', status, statuses)}
        {select('severity', severity, severities)}
        {select('type', type, types)}
      </div>
      {act.error && <ErrorBox error={act.error} />}
      <Async state={list} empty={(l) => (l.total === 0 ? 'No alerts match.' : false)}>
        {(l) => (
          <>
            <Table
              label="alerts"
              rows={l.items}
              rowKey={(a) => a.id}
              columns={[
                { title: 'Last seen', cell: (a) => <Time t={a.last_seen_at ?? a.createdAt} /> },
                { title: 'Severity', cell: (a) => <Badge value={a.severity} /> },
                { title: 'Type', cell: (a) => a.type },
                { title: 'Status', cell: (a) => <Badge value={a.status} /> },
                { title: 'Message', cell: (a) => a.message },
                { title: 'Master', cell: (a) => a.master_id ?? '–' },
                { title: 'Seen', cell: (a) => <Num n={a.occurrences} />, class: 'right' },
                {
                  title: 'Actions',
                  cell: (a) => (
                    <span class="row-actions">
                      {a.status === 'active' && <button type="button" disabled={act.busy} onClick={() => act.go(a.id, 'acknowledge')}>Acknowledge</button>}
                      {a.status === 'acknowledged' && <button type="button" disabled={act.busy} onClick={() => act.go(a.id, 'resolve')}>Resolve</button>}
                      {(a.status === 'active' || a.status === 'acknowledged') && <button type="button" disabled={act.busy} onClick={() => act.go(a.id, 'dismiss')}>Dismiss</button>}
                    </span>
                  ),
                },
              ]}
            />
            <PagePager total={l.total} page={page} limit={limit} onPage={(p) => setQuery({ page: p > 1 ? p : undefined }, { push: true })} />
          </>
        )}
      </Async>
      <div class="columns">
        <Thresholds />
        <Webhook />
      </div>
    </section>
  );
}

function Thresholds() {
  const t = useApi((signal) => api.get('/admin/alerts/thresholds', { signal }), []);
  const [saved, setSaved] = useState(false);
  const fields = ['global_qps', 'master_rpm', 'master_tpm', 'master_rpd', 'master_tpd', 'min_samples'] as const;
  return (
    <div>
      <h2>Thresholds</h2>
      <p class="muted">0 disables a check.</p>
      <Async state={t}>
        {(v) => (
          <ApiForm label="alert thresholds" submitLabel="Save thresholds" onSubmit={async (body) => (await api.put('/admin/alerts/thresholds', { body }), setSaved(true), t.reload())}>
            {(e) => (
              <>
                {fields.map((f) => (
                  <Field key={f} label={f} name={f} error={e[f]}>
                    <input name={f} inputMode="numeric" defaultValue={String(v[f])} />
                  </Field>
                ))}
                {saved && <p role="status">Saved.</p>}
              </>
            )}
          </ApiForm>
        )}
      </Async>
    </div>
  );
}

function Webhook() {
  const w = useApi((signal) => api.get('/admin/logs/webhook', { signal }), []);
  const deliveries = useApi((signal) => api.get('/admin/logs/webhook/deliveries', { query: { limit: 20 }, signal }), []);
  return (
    <div>
      <h2>Log-error webhook</h2>
      <Async state={w}>
        {(v) => (
          <ApiForm label="log-error webhook" submitLabel="Save webhook" onSubmit={async (body) => (await api.put('/admin/logs/webhook', { body }), w.reload())}>
            {(e) => (
              <>
                <label class="check">
                  <input type="checkbox" name="enabled" defaultChecked={v.enabled} /> Enabled
                </label>
                <Field label="URL" name="url" error={e.url}><input name="url" defaultValue={v.url} /></Field>
                <Field label="Errors that trigger it" name="threshold" error={e.threshold}><input name="threshold" inputMode="numeric" defaultValue={String(v.threshold)} /></Field>
                <Field label="Window (s)" name="window_seconds" error={e.window_seconds}><input name="window_seconds" inputMode="numeric" defaultValue={String(v.window_seconds)} /></Field>
                <Field label="Cooldown (s)" name="cooldown_seconds" error={e.cooldown_seconds}><input name="cooldown_seconds" inputMode="numeric" defaultValue={String(v.cooldown_seconds)} /></Field>
                <Field label="Status code from" name="status_code_threshold" error={e.status_code_threshold}><input name="status_code_threshold" inputMode="numeric" defaultValue={String(v.status_code_threshold)} /></Field>
                <label class="check">
                  <input type="checkbox" name="detect_error_message" defaultChecked={v.detect_error_message} /> Count records with an error message
                </label>
                <Field label={`Signing secret (${v.secret_set ? 'set; type to replace' : 'not set'})`} name="secret" error={e.secret}><input name="secret" type="password" autoComplete="off" /></Field>
              </>
            )}
          </ApiForm>
        )}
      </Async>
      <h3>Recent deliveries</h3>
      <Async state={deliveries} empty={(d) => (d.total === 0 ? 'No deliveries yet.' : false)}>
        {(d) => (
          <Table
            label="webhook deliveries"
            rows={d.items}
            rowKey={(x) => x.id}
            columns={[
              { title: 'Time', cell: (x) => <Time t={x.createdAt} /> },
              { title: 'Result', cell: (x) => <Badge value={x.ok ? 'ok' : 'failed'} /> },
              { title: 'Status', cell: (x) => x.status_code ?? '–' },
              { title: 'Errors', cell: (x) => <Num n={x.count} /> },
              { title: 'Attempt', cell: (x) => x.attempt },
              { title: 'Error', cell: (x) => x.error || '–' },
            ]}
          />
        )}
      </Async>
    </div>
  );
}
