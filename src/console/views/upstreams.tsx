/**
 * Upstreams: provider groups (create, edit, delete), their upstream keys with
 * status, ban state and reason, weights, batch status changes, and usage
 * statistics with success and failure rates.
 */
import { useState } from 'preact/hooks';
import { api } from '../session';
import { setQuery, useLocation } from '../router';
import { Async, Badge, Confirm, ErrorBox, Field, Modal, Num, PagePager, Table, Time } from '../ui/components';
import { useAction, useApi } from '../ui/hooks';
import { ApiForm } from '../ui/form';
import { pct } from '../ui/format';
import type { Success } from '../api/client';

type Group = Success<'/admin/provider-groups', 'get'>['items'][number];
const groupTypes = ['openai', 'anthropic', 'gemini', 'openai_compatible', 'vertex', 'anthropic_oauth', 'gemini_oauth', 'openai_oauth'];

export function Upstreams() {
  const { query } = useLocation();
  const groupId = Number(query.get('group_id')) || undefined;
  const keyPage = Math.max(1, Number(query.get('page')) || 1);
  const groups = useApi((signal) => api.get('/admin/provider-groups', { query: { limit: 100 }, signal }), []);
  const keys = useApi((signal) => api.get('/admin/api-keys', { query: { group_id: groupId, page: keyPage, limit: 50 }, signal }), [groupId, keyPage]);
  const stats = useApi((signal) => api.get('/admin/api-keys/stats', { query: { group_id: groupId }, signal }), [groupId]);
  const [editing, setEditing] = useState<Group | 'new' | null>(null);
  const [deleting, setDeleting] = useState<Group | null>(null);
  const [selected, setSelected] = useState<Set<number>>(new Set());
  const batch = useAction(async (status: 'active' | 'manual_disabled') => {
    await api.put('/admin/api-keys/batch/status', { body: { ids: [...selected], status } });
    setSelected(new Set());
    keys.reload();
  });
  const toggle = (id: number) => setSelected((s) => (s.has(id) ? (s.delete(id), new Set(s)) : new Set(s.add(id))));

  return (
    <section>
      <h1>Upstreams</h1>
      <h2>Provider groups</h2>
      <div class="toolbar">
        <button type="button" class="primary" onClick={() => setEditing('new')}>New group</button>
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
              { title: 'Models', cell: (x) => x.models.join(', ') || '–' },
              { title: 'Status', cell: (x) => <Badge value={x.status} /> },
              {
                title: 'Actions',
                cell: (x) => (
                  <span class="row-actions" onClick={(e) => e.stopPropagation()}>
                    <button type="button" onClick={() => setEditing(x)}>Edit</button>
                    <button type="button" class="danger" onClick={() => setDeleting(x)}>Delete</button>
                  </span>
                ),
              },
            ]}
          />
        )}
      </Async>
      <h2>Upstream keys{groupId ? ` of group #${groupId}` : ''}</h2>
      <div class="toolbar">
        <span class="muted">{selected.size} selected</span>
        <button type="button" disabled={!selected.size || batch.busy} onClick={() => batch.go('active')}>Activate selected</button>
        <button type="button" disabled={!selected.size || batch.busy} onClick={() => batch.go('manual_disabled')}>Disable selected</button>
      </div>
      {batch.error && <ErrorBox error={batch.error} />}
      <Async state={keys} empty={(k) => (k.total === 0 ? 'No upstream keys.' : false)}>
        {(k) => (
          <>
            <Table
              label="upstream keys"
              rows={k.items}
              rowKey={(x) => x.id}
              columns={[
                { title: '', cell: (x) => <input type="checkbox" aria-label={`select key ${x.id}`} checked={selected.has(x.id)} onChange={() => toggle(x.id)} /> },
                { title: 'ID', cell: (x) => x.id },
                { title: 'Group', cell: (x) => x.group_id },
                { title: 'Key', cell: (x) => <code>{x.api_key}</code> },
                { title: 'Weight', cell: (x) => x.weight, class: 'right' },
                { title: 'Status', cell: (x) => <Badge value={x.status} /> },
                { title: 'Ban', cell: (x) => (x.ban_reason ? <span title={x.ban_until ? `until ${x.ban_until}` : ''}>{x.ban_reason}</span> : '–') },
                { title: 'Ban until', cell: (x) => (x.ban_until ? <Time t={x.ban_until} /> : '–') },
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
              { title: 'Keys', cell: (x) => x.keys },
              { title: 'Requests', cell: (x) => <Num n={x.requests} />, class: 'right' },
              { title: 'Success', cell: (x) => pct(x.success_rate), class: 'right' },
              { title: 'Failure', cell: (x) => pct(x.failure_rate), class: 'right' },
            ]}
          />
        )}
      </Async>
      {editing && (
        <Modal title={editing === 'new' ? 'New provider group' : `Edit group ${editing.name}`} onClose={() => setEditing(null)}>
          <ApiForm
            label="provider group"
            submitLabel="Save"
            cancel={() => setEditing(null)}
            onSubmit={async (body) => {
              if (editing === 'new') await api.post('/admin/provider-groups', { body: body as never });
              else await api.put('/admin/provider-groups/{id}', { path: { id: editing.id }, body });
              setEditing(null);
              groups.reload();
            }}
          >
            {(e) => {
              const g = editing === 'new' ? undefined : editing;
              return (
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
              );
            }}
          </ApiForm>
        </Modal>
      )}
      {deleting && (
        <Confirm title="Delete provider group" danger confirmLabel="Delete" onCancel={() => setDeleting(null)} onDone={() => (setDeleting(null), groups.reload(), keys.reload())} action={() => api.delete('/admin/provider-groups/{id}', { path: { id: deleting.id } })}>
          <p>
            Group <strong>{deleting.name}</strong> and all its upstream keys are deleted. If active bindings use it, the service refuses and lists them.
          </p>
        </Confirm>
      )}
    </section>
  );
}
