/**
 * Upstreams: provider groups (create, edit, delete), their upstream keys with
 * status, ban state and reason, weights (create or edit one key, batch status
 * changes), and usage statistics with success and failure rates.
 */
import { useState } from 'preact/hooks';
import { api } from '../session';
import { setQuery, useLocation } from '../router';
import { Async, Badge, Confirm, Field, PagePager, Num, Table, Time } from '../ui/components';
import { useApi } from '../ui/hooks';
import { BatchStatus, EditDialog, RowActions, useSelection } from '../ui/crud';
import { pct } from '../ui/format';
import type { Success } from '../api/client';
import { BatchKeys } from './upstream-batch';

type Group = Success<'/admin/provider-groups', 'get'>['items'][number];
type UpstreamKey = Success<'/admin/api-keys', 'get'>['items'][number];
const groupTypes = ['openai', 'anthropic', 'gemini', 'openai_compatible', 'vertex', 'anthropic_oauth', 'gemini_oauth', 'openai_oauth'];

type Dialog = { group: Group | undefined } | { removeGroup: Group } | { key: UpstreamKey | undefined } | { removeKey: UpstreamKey } | { batch: true } | null;

export function Upstreams() {
  const { query } = useLocation();
  const groupId = Number(query.get('group_id')) || undefined;
  const keyPage = Math.max(1, Number(query.get('page')) || 1);
  const groups = useApi((signal) => api.get('/admin/provider-groups', { query: { limit: 100 }, signal }), []);
  const keys = useApi((signal) => api.get('/admin/api-keys', { query: { group_id: groupId, page: keyPage, limit: 50 }, signal }), [groupId, keyPage]);
  const stats = useApi((signal) => api.get('/admin/api-keys/stats', { query: { group_id: groupId }, signal }), [groupId]);
  const [dialog, setDialog] = useState<Dialog>(null);
  const selection = useSelection();
  const close = () => setDialog(null);

  return (
    <section>
      <h1>Upstreams</h1>
      <h2>Provider groups</h2>
      <div class="toolbar">
        <button type="button" class="primary" onClick={() => setDialog({ group: undefined })}>New group</button>
        <span class="muted">a click on a group lists its keys</span>
      </div>
      <Async state={groups} empty={(g) => (g.total === 0 ? 'No provider groups yet.' : false)}>
        {(g) => (
          <Table
            label="provider groups"
            rows={g.items}
            rowKey={(x) => x.id}
            selected={groupId}
            onRow={(x) => setQuery({ group_id: x.id === groupId ? undefined : x.id, page: undefined }, { push: true })}
            columns={[
              { title: 'ID', cell: (x) => x.id },
              { title: 'Name', cell: (x) => x.name },
              { title: 'Type', cell: (x) => x.type },
              { title: 'Base URL', cell: (x) => <code>{x.base_url}</code> },
              { title: 'Models', cell: (x) => <span class="ellipsis" title={x.models.join(', ')}>{x.models.join(', ') || '–'}</span> },
              { title: 'Status', cell: (x) => <Badge value={x.status} /> },
              { title: 'Actions', cell: (x) => <RowActions onEdit={() => setDialog({ group: x })} onDelete={() => setDialog({ removeGroup: x })} /> },
            ]}
          />
        )}
      </Async>
      <h2>Upstream keys{groupId ? ` of group #${groupId}` : ''}</h2>
      <BatchStatus
        selection={selection}
        statuses={[{ status: 'active', label: 'Activate selected' }, { status: 'manual_disabled', label: 'Disable selected' }]}
        run={(ids, status) => api.put('/admin/api-keys/batch/status', { body: { ids, status } })}
        onDone={keys.reload}
      >
        <button type="button" class="primary" onClick={() => setDialog({ key: undefined })}>New key</button>
        <button type="button" onClick={() => setDialog({ batch: true })}>New keys (batch)</button>
      </BatchStatus>
      <Async state={keys} empty={(k) => (k.total === 0 ? 'No upstream keys.' : false)}>
        {(k) => (
          <>
            <Table
              label="upstream keys"
              rows={k.items}
              rowKey={(x) => x.id}
              columns={[
                selection.column<UpstreamKey>('key'),
                { title: 'ID', cell: (x) => x.id },
                { title: 'Group', cell: (x) => groups.data?.items.find((g) => g.id === x.group_id)?.name ?? `#${x.group_id}` },
                { title: 'Key', cell: (x) => <code>{x.api_key}</code> },
                { title: 'Weight', cell: (x) => x.weight, class: 'right' },
                { title: 'Status', cell: (x) => <Badge value={x.status} /> },
                { title: 'Ban reason', cell: (x) => (x.ban_reason ? <span class="ellipsis" title={x.ban_reason}>{x.ban_reason}</span> : '–') },
                { title: 'Ban until', cell: (x) => (x.ban_until ? <Time t={x.ban_until} /> : '–') },
                { title: 'Auto-ban', cell: (x) => (x.auto_ban ? 'on' : 'off') },
                { title: 'Actions', cell: (x) => <RowActions onEdit={() => setDialog({ key: x })} onDelete={() => setDialog({ removeKey: x })} /> },
              ]}
            />
            <PagePager total={k.total} page={keyPage} limit={50} onPage={(p) => setQuery({ page: p > 1 ? p : undefined }, { push: true })} />
          </>
        )}
      </Async>
      <h2>Usage (success and failure rates)</h2>
      <Async state={stats} empty={(s) => (s.groups.length === 0 ? 'No usage counted yet.' : false)}>
        {(s) => (
          <Table
            label="upstream usage"
            rows={s.groups}
            rowKey={(x) => x.group_id ?? 0}
            columns={[
              { title: 'Group', cell: (x) => x.name ?? x.group_id },
              { title: 'Keys', cell: (x) => x.keys, class: 'right' },
              { title: 'Requests', cell: (x) => <Num n={x.requests} />, class: 'right' },
              { title: 'Success', cell: (x) => pct(x.success_rate), class: 'right' },
              { title: 'Failure', cell: (x) => <span class={(x.failure_rate ?? 0) > 0 ? 'bad' : ''}>{pct(x.failure_rate)}</span>, class: 'right' },
            ]}
          />
        )}
      </Async>
      {dialog && 'group' in dialog && (
        <EditDialog<Group>
          what="provider group"
          label="provider group"
          current={dialog.group}
          title={dialog.group ? `Edit group ${dialog.group.name}` : undefined}
          create={(body) => api.post('/admin/provider-groups', { body: body as never })}
          update={(g, body) => api.put('/admin/provider-groups/{id}', { path: { id: g.id }, body })}
          onClose={close}
          onSaved={() => (close(), groups.reload())}
        >
          {(e, g) => (
            <>
              <Field label="Name" name="name" error={e.name}><input name="name" defaultValue={g?.name ?? ''} /></Field>
              <Field label="Type" name="type" error={e.type}>
                <select name="type" defaultValue={g?.type ?? 'openai'}>
                  {groupTypes.map((t) => <option key={t} value={t}>{t}</option>)}
                </select>
              </Field>
              <Field label="Base URL" name="base_url" error={e.base_url}><input name="base_url" defaultValue={g?.base_url ?? ''} /></Field>
              <Field label="Models (comma-separated)" name="models" error={e.models}><input name="models" data-type="list" defaultValue={g?.models.join(', ') ?? ''} /></Field>
              <Field label="Status" name="status" error={e.status}>
                <select name="status" defaultValue={g?.status === 'manual_disabled' ? 'manual_disabled' : 'active'}>
                  <option value="active">active</option>
                  <option value="manual_disabled">manual_disabled</option>
                </select>
              </Field>
            </>
          )}
        </EditDialog>
      )}
      {dialog && 'key' in dialog && (
        <EditDialog<UpstreamKey>
          what="upstream key"
          label="upstream key"
          current={dialog.key}
          title={dialog.key ? `Edit upstream key #${dialog.key.id}` : undefined}
          create={(body) => api.post('/admin/api-keys', { body: body as never })}
          update={(k, body) => api.put('/admin/api-keys/{id}', { path: { id: k.id }, body })}
          onClose={close}
          onSaved={() => (close(), keys.reload(), stats.reload())}
        >
          {(e, k) => (
            <>
              <Field label="Provider group" name="group_id" error={e.group_id}>
                <select name="group_id" data-type="number" defaultValue={String(k?.group_id ?? groupId ?? groups.data?.items[0]?.id ?? '')}>
                  {(groups.data?.items ?? []).map((g) => (
                    <option key={g.id} value={String(g.id)}>
                      #{g.id} {g.name}
                    </option>
                  ))}
                </select>
              </Field>
              <Field label={k ? `Secret (now ${k.api_key}; empty: unchanged)` : 'Secret'} name="api_key" error={e.api_key}>
                <input name="api_key" type="password" autoComplete="off" />
              </Field>
              <Field label="Weight" name="weight" error={e.weight} hint="its share of the group's traffic against the other keys' weights">
                <input name="weight" inputMode="numeric" defaultValue={k ? String(k.weight) : '1'} />
              </Field>
              <Field label="Status" name="status" error={e.status} hint={k?.ban_reason ? `banned: ${k.ban_reason}; active lifts the ban` : undefined}>
                <select name="status" defaultValue={k?.status === 'manual_disabled' ? 'manual_disabled' : 'active'}>
                  <option value="active">active</option>
                  <option value="manual_disabled">manual_disabled</option>
                </select>
              </Field>
              <label class="check">
                <input type="checkbox" name="auto_ban" defaultChecked={k?.auto_ban ?? true} /> Ban automatically on upstream failures
              </label>
            </>
          )}
        </EditDialog>
      )}
      {dialog && 'batch' in dialog && <BatchKeys groups={groups.data?.items ?? []} groupId={groupId} onClose={close} onDone={() => (keys.reload(), stats.reload())} />}
      {dialog && 'removeGroup' in dialog && (
        <Confirm title="Delete provider group" danger confirmLabel="Delete" onCancel={close} onDone={() => (close(), groups.reload(), keys.reload())} action={() => api.delete('/admin/provider-groups/{id}', { path: { id: dialog.removeGroup.id } })}>
          <p>
            Group <strong>{dialog.removeGroup.name}</strong> and all its upstream keys are deleted. If active bindings use it, the service refuses and lists them.
          </p>
        </Confirm>
      )}
      {dialog && 'removeKey' in dialog && (
        <Confirm title="Delete upstream key" danger confirmLabel="Delete" onCancel={close} onDone={() => (close(), keys.reload())} action={() => api.delete('/admin/api-keys/{id}', { path: { id: dialog.removeKey.id } })}>
          <p>
            Upstream key #{dialog.removeKey.id} (<code>{dialog.removeKey.api_key}</code>) of group #{dialog.removeKey.group_id} is deleted; the data plane stops using it.
          </p>
        </Confirm>
      )}
    </section>
  );
}
