/** Routing: namespaces and bindings (weights, status, batch status) and what each bindingKey resolves to. */
import { useState } from 'preact/hooks';
import { api } from '../session';
import { setQuery, useLocation } from '../router';
import { Async, Badge, Confirm, Field, PagePager, Table } from '../ui/components';
import { useApi } from '../ui/hooks';
import { BatchStatus, EditDialog, RowActions, useSelection } from '../ui/crud';
import type { Success } from '../api/client';

type Binding = Success<'/admin/bindings', 'get'>['items'][number];

export function Routing() {
  const { query } = useLocation();
  const namespace = query.get('namespace') ?? '';
  const page = Math.max(1, Number(query.get('page')) || 1);
  const namespaces = useApi((signal) => api.get('/admin/namespaces', { query: { limit: 100 }, signal }), []);
  const bindings = useApi((signal) => api.get('/admin/bindings', { query: { namespace: namespace || undefined, page, limit: 50 }, signal }), [namespace, page]);
  const groups = useApi((signal) => api.get('/admin/provider-groups', { query: { limit: 100 }, signal }), []);
  const [dialog, setDialog] = useState<'namespace' | { binding: Binding | undefined } | { delete: Binding } | null>(null);
  const selection = useSelection();
  const groupName = (id: number) => groups.data?.items.find((g) => g.id === id)?.name ?? `#${id}`;
  const close = () => setDialog(null);
  return (
    <section>
      <h1>Routing</h1>
      <h2>Namespaces</h2>
      <div class="toolbar">
        <button type="button" class="primary" onClick={() => setDialog('namespace')}>New namespace</button>
      </div>
      <Async state={namespaces} empty={(n) => (n.total === 0 ? 'No namespaces yet.' : false)}>
        {(n) => (
          <Table
            label="namespaces"
            rows={n.items}
            rowKey={(x) => x.id}
            selected={n.items.find((x) => x.name === namespace)?.id}
            onRow={(x) => setQuery({ namespace: x.name === namespace ? undefined : x.name, page: undefined }, { push: true })}
            columns={[
              { title: 'Name', cell: (x) => x.name },
              { title: 'Description', cell: (x) => x.description || '–' },
              { title: 'Status', cell: (x) => <Badge value={x.status} /> },
            ]}
          />
        )}
      </Async>
      <h2>Bindings{namespace ? ` in ${namespace}` : ''}</h2>
      <BatchStatus
        selection={selection}
        statuses={[{ status: 'active', label: 'Activate selected' }, { status: 'disabled', label: 'Disable selected' }]}
        run={(ids, status) => api.put('/admin/bindings/batch/status', { body: { ids, status } })}
        onDone={bindings.reload}
      >
        <button type="button" class="primary" onClick={() => setDialog({ binding: undefined })}>New binding</button>
      </BatchStatus>
      <Async state={bindings} empty={(b) => (b.total === 0 ? 'No bindings.' : false)}>
        {(b) => (
          <>
            <Table
              label="bindings"
              rows={b.items}
              rowKey={(x) => x.id}
              columns={[
                selection.column<Binding>('binding'),
                { title: 'bindingKey', cell: (x) => <code>{x.binding_key}</code> },
                { title: 'Resolves to', cell: (x) => `${groupName(x.group_id)} → ${x.selector_value || x.public_model}` },
                { title: 'Weight', cell: (x) => x.weight, class: 'right' },
                { title: 'Status', cell: (x) => <Badge value={x.status} /> },
                { title: 'Actions', cell: (x) => <RowActions onEdit={() => setDialog({ binding: x })} onDelete={() => setDialog({ delete: x })} /> },
              ]}
            />
            <PagePager total={b.total} page={page} limit={50} onPage={(p) => setQuery({ page: p > 1 ? p : undefined }, { push: true })} />
          </>
        )}
      </Async>
      {dialog === 'namespace' && (
        <EditDialog<never>
          what="namespace"
          label="namespace"
          current={undefined}
          create={(body) => api.post('/admin/namespaces', { body: body as never })}
          update={() => Promise.resolve()}
          onClose={close}
          onSaved={() => (close(), namespaces.reload())}
        >
          {(e) => (
            <>
              <Field label="Name" name="name" error={e.name}><input name="name" /></Field>
              <Field label="Description" name="description" error={e.description}><input name="description" /></Field>
            </>
          )}
        </EditDialog>
      )}
      {dialog && typeof dialog === 'object' && 'binding' in dialog && (
        <EditDialog<Binding>
          what="binding"
          label="binding"
          current={dialog.binding}
          create={(body) => api.post('/admin/bindings', { body: body as never })}
          update={(b, body) => api.put('/admin/bindings/{id}', { path: { id: b.id }, body })}
          onClose={close}
          onSaved={() => (close(), bindings.reload())}
        >
          {(e, b) => (
            <>
              {!b && (
                <>
                  <Field label="Namespace" name="namespace" error={e.namespace}><input name="namespace" defaultValue={namespace} /></Field>
                  <Field label="Public model" name="public_model" error={e.public_model}><input name="public_model" /></Field>
                  <Field label="Provider group" name="group_id" error={e.group_id}>
                    <select name="group_id" data-type="number">
                      {(groups.data?.items ?? []).map((g) => <option key={g.id} value={String(g.id)}>#{g.id} {g.name}</option>)}
                    </select>
                  </Field>
                </>
              )}
              <Field label="Upstream model (selector)" name="selector_value" error={e.selector_value}><input name="selector_value" defaultValue={b?.selector_value ?? ''} /></Field>
              <Field label="Weight" name="weight" error={e.weight}><input name="weight" inputMode="numeric" defaultValue={b ? String(b.weight) : ''} /></Field>
              <Field label="Status" name="status" error={e.status}>
                <select name="status" defaultValue={b?.status ?? 'active'}><option value="active">active</option><option value="disabled">disabled</option></select>
              </Field>
            </>
          )}
        </EditDialog>
      )}
      {dialog && typeof dialog === 'object' && 'delete' in dialog && (
        <Confirm title="Delete binding" danger confirmLabel="Delete" onCancel={close} onDone={() => (close(), bindings.reload())} action={() => api.delete('/admin/bindings/{id}', { path: { id: dialog.delete.id } })}>
          <p>Binding <code>{dialog.delete.binding_key}</code> is removed; requests for it stop resolving to {groupName(dialog.delete.group_id)}.</p>
        </Confirm>
      )}
    </section>
  );
}
