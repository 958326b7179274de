/**
 * One master: its realtime figures (refreshed), usage chart (click: its logs),
 * child keys (issue with the secret shown once, edit limits, suspend, access, revoke), and the
 * master's own actions: edit, freeze/unfreeze, reset key, access, delete.
 */
import { useMemo, useState } from 'preact/hooks';
import { api } from '../session';
import { href, navigate, useLocation } from '../router';
import { Async, Badge, Confirm, ErrorBox, Field, Link, Modal, Num, SecretOnce, Tile, Time } from '../ui/components';
import { useApi } from '../ui/hooks';
import { ApiForm } from '../ui/form';
import { TimeChart } from '../ui/chart';
import { roundMoney } from '../ui/format';
import { windowOf } from './common';
import { ChildKeys, type KeyCalls } from './child-keys';
import { Freshness, usePipeline } from './pipeline';
import { MetricSwitch, RealtimeTiles, metricFormat, metricOf } from './usage-parts';
import { BudgetInputs, BudgetTiles, Money, Unpriced } from './money';

type Dialog = 'edit' | 'freeze' | 'unfreeze' | 'reset' | 'delete' | 'access' | null;

export function Tenant({ params }: { params: Record<string, string> }) {
  const id = Number(params.id);
  const metric = metricOf(useLocation().query.get('metric'));
  const master = useApi((signal) => api.get('/admin/masters/{id}', { path: { id }, signal }), [id], 5000);
  const keys = useApi((signal) => api.get('/admin/masters/{id}/keys', { path: { id }, query: { limit: 100 }, signal }), [id]);
  const win = useMemo(() => windowOf('7d'), []);
  const usage = useApi(
    (signal) => api.get('/admin/logs/stats/traffic-chart', { query: { since: win.since, until: win.until, granularity: 'hour', master_id: id, top_n: 5, metric }, signal }),
    [id, metric],
  );
  // The week's totals (cost and the records without a price among them) beside the chart.
  const totals = useApi(
    (signal) => api.get('/admin/logs/stats', { query: { since: win.since, until: win.until, group_by: 'day', master_id: id, percentiles: false }, signal }),
    [id],
  );
  const [dialog, setDialog] = useState<Dialog>(null);
  const pipeline = usePipeline();
  const keyCalls = useMemo<KeyCalls>(
    () => ({
      issue: (body) => api.post('/admin/masters/{id}/keys', { path: { id }, body }),
      update: (keyId, body) => api.put('/admin/keys/{id}', { path: { id: keyId }, body }),
      revoke: (keyId) => api.post('/admin/masters/{id}/keys/{keyId}/revoke', { path: { id, keyId } }),
      access: (keyId, body) => api.put('/admin/keys/{id}/access', { path: { id: keyId }, body }),
    }),
    [id],
  );
  const [secret, setSecret] = useState<{ label: string; value: string } | null>(null);
  const close = () => setDialog(null);
  const done = () => (setDialog(null), master.reload(), keys.reload());

  // A master that does not exist (or no longer): its error alone, not empty charts and key actions under it.
  if (master.error?.status === 404) {
    return (
      <section>
        <p>
          <Link to={href('/tenants')}>← Tenants</Link>
        </p>
        <ErrorBox error={master.error} />
      </section>
    );
  }
  return (
    <section>
      <p>
        <Link to={href('/tenants')}>← Tenants</Link>
      </p>
      <Async state={master}>
        {(m) => (
          <>
            <h1>
              {m.name} <Badge value={m.status} />
            </h1>
            <p class="muted">
              Master #{m.id} · group {m.group} · epoch {m.epoch} · key prefix <code>{m.key_prefix ?? '–'}</code> · created <Time t={m.createdAt} />
            </p>
            <div class="toolbar" role="group" aria-label="master actions">
              <button type="button" onClick={() => setDialog('edit')}>Edit</button>
              {m.status === 'active' ? (
                <button type="button" onClick={() => setDialog('freeze')}>Freeze</button>
              ) : (
                <button type="button" onClick={() => setDialog('unfreeze')}>Unfreeze</button>
              )}
              <button type="button" onClick={() => setDialog('reset')}>Reset key</button>
              <button type="button" onClick={() => setDialog('access')}>Access</button>
              <button type="button" class="danger" onClick={() => setDialog('delete')}>Delete</button>
              <Link to={href('/logs', { master_id: m.id })}>Logs of this master</Link>
            </div>
            {m.realtime && <RealtimeTiles r={m.realtime} testId="master-realtime" />}
            <BudgetTiles b={m} />
            {dialog === 'edit' && (
              <Modal title="Edit master" onClose={close}>
                <ApiForm label="edit master" submitLabel="Save" cancel={close} onSubmit={async (body) => (await api.put('/admin/masters/{id}', { path: { id }, body }), done())}>
                  {(e) => (
                    <>
                      <Field label="Name" name="name" error={e.name}><input name="name" defaultValue={m.name} /></Field>
                      <Field label="Group" name="group" error={e.group}><input name="group" defaultValue={m.group} /></Field>
                      <Field label="Max child keys" name="max_child_keys" error={e.max_child_keys}><input name="max_child_keys" type="number" defaultValue={String(m.max_child_keys)} /></Field>
                      <Field label="Global QPS (0: none)" name="global_qps" error={e.global_qps}><input name="global_qps" type="number" defaultValue={String(m.global_qps)} /></Field>
                      <BudgetInputs errors={e} current={m} />
                    </>
                  )}
                </ApiForm>
              </Modal>
            )}
            {dialog === 'access' && (
              <Modal title="Access of this master" onClose={close}>
                <ApiForm label="master access" submitLabel="Save" cancel={close} onSubmit={async (body) => (await api.put('/admin/masters/{id}/access', { path: { id }, body }), done())}>
                  {(e) => (
                    <>
                      <Field label="Default namespace" name="default_namespace" error={e.default_namespace}><input name="default_namespace" defaultValue={m.default_namespace ?? ''} /></Field>
                      <Field label="Allowed namespaces (comma-separated)" name="allowed_namespaces" error={e.allowed_namespaces}><input name="allowed_namespaces" data-type="list" defaultValue={(m.allowed_namespaces ?? []).join(', ')} /></Field>
                      <label class="check"><input name="propagate" type="checkbox" /> Apply to existing child keys</label>
                    </>
                  )}
                </ApiForm>
              </Modal>
            )}
            {dialog === 'freeze' && (
              <Confirm title="Freeze master" confirmLabel="Freeze" danger onCancel={close} onDone={done} action={() => api.post('/admin/masters/{id}/freeze', { path: { id } })}>
                <p>
                  <strong>{m.name}</strong>'s master key and all its {m.child_keys ?? ''} child keys will be refused until it is unfrozen.
                </p>
              </Confirm>
            )}
            {dialog === 'unfreeze' && (
              <Confirm title="Unfreeze master" confirmLabel="Unfreeze" onCancel={close} onDone={done} action={() => api.post('/admin/masters/{id}/unfreeze', { path: { id } })}>
                <p>{m.name} and its child keys will be accepted again.</p>
              </Confirm>
            )}
            {dialog === 'reset' && (
              <Confirm
                title="Reset master key"
                confirmLabel="Reset key"
                danger
                onCancel={close}
                onDone={(r) => (done(), setSecret({ label: 'New master key', value: (r as { master_key?: string }).master_key ?? '' }))}
                action={() => api.post('/admin/masters/{id}/reset-key', { path: { id } })}
              >
                <p>
                  The current key of <strong>{m.name}</strong> stops working, and the epoch rises so every child key issued before it fails too.
                </p>
              </Confirm>
            )}
            {dialog === 'delete' && (
              <Confirm title="Delete master" confirmLabel="Delete" danger onCancel={close} onDone={() => navigate(href('/tenants'))} action={() => api.delete('/admin/masters/{id}', { path: { id } })}>
                <p>
                  <strong>{m.name}</strong> (#{m.id}) is deleted and every one of its child keys fails from now on.
                </p>
              </Confirm>
            )}
          </>
        )}
      </Async>
      <h2>Usage, last 7 days</h2>
      <Async state={totals}>
        {(t) => {
          const sum = (f: 'requests' | 'tokens' | 'cost' | 'unpriced') => t.items.reduce((n, i) => n + i[f], 0);
          return (
            <div class="tiles" data-testid="master-usage">
              <Tile label="Requests" value={<Num n={sum('requests')} compact />} />
              <Tile label="Tokens" value={<Num n={sum('tokens')} compact />} />
              <Tile label="Cost" value={<Money n={roundMoney(sum('cost'))} />} sub={<Unpriced n={sum('unpriced')} />} />
            </div>
          );
        }}
      </Async>
      <div class="toolbar">
        <MetricSwitch current={metric} />
      </div>
      <Async state={usage} empty={(u) => (u.series.length === 0 ? 'No traffic in the last 7 days.' : false)}>
        {(u) => (
          <>
            <TimeChart
              label="usage of this master"
              range={[win.since, win.until]}
              x={u.x}
              series={u.series}
              format={metricFormat(metric)}
              onPoint={(t, name) => navigate(href('/logs', { master_id: id, since: t, until: t + 3600, model: name === 'other' ? undefined : name, series: name === 'other' ? 'other' : undefined }))}
            />
          </>
        )}
      </Async>
      <Freshness state={pipeline} />
      <h2>Child keys</h2>
      <ChildKeys list={keys} calls={keyCalls} onChange={keys.reload} />
      {secret && <SecretOnce label={secret.label} secret={secret.value} onClose={() => setSecret(null)} />}
    </section>
  );
}
