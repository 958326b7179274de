/** Tenants (masters): search and paging, and creating one (its key shown once). */
import { useState } from 'preact/hooks';
import { api } from '../session';
import { href, navigate, setQuery, useLocation } from '../router';
import { Async, Badge, Field, Link, Modal, Num, PagePager, SecretOnce, Table, Time } from '../ui/components';
import { useApi } from '../ui/hooks';
import { ApiForm } from '../ui/form';
import { Budget, BudgetInputs } from './money';

export function Tenants() {
  const { query } = useLocation();
  const search = query.get('search') ?? '';
  const page = Math.max(1, Number(query.get('page')) || 1);
  const limit = 20;
  const list = useApi((signal) => api.get('/admin/masters', { query: { page, limit, search: search || undefined }, signal }), [page, search]);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<{ id: number; key: string } | null>(null);

  return (
    <section>
      <h1>Tenants</h1>
      <div class="toolbar">
        <form
          role="search"
          onSubmit={(e) => {
            e.preventDefault();
            setQuery({ search: String(new FormData(e.currentTarget).get('search') ?? '').trim(), page: undefined }, { push: true });
          }}
        >
          <input type="search" name="search" aria-label="search masters by name or group" placeholder="name or group" defaultValue={search} />
          <button type="submit">Search</button>
        </form>
        <button type="button" class="primary" onClick={() => setCreating(true)}>
          New master
        </button>
      </div>
      <Async state={list} empty={(l) => (l.total === 0 ? (search ? `No master matches “${search}”.` : 'No masters yet.') : false)}>
        {(l) => (
          <>
            <Table
              label="masters"
              rows={l.items}
              rowKey={(m) => m.id}
              onRow={(m) => navigate(href(`/tenants/${m.id}`))}
              columns={[
                { title: 'ID', cell: (m) => m.id },
                { title: 'Name', cell: (m) => <Link to={href(`/tenants/${m.id}`)}>{m.name}</Link> },
                { title: 'Group', cell: (m) => m.group },
                { title: 'Status', cell: (m) => <Badge value={m.status} /> },
                { title: 'Child keys', cell: (m) => <Num n={m.child_keys ?? 0} />, class: 'right' },
                { title: 'Max keys', cell: (m) => <Num n={m.max_child_keys} />, class: 'right' },
                { title: 'QPS limit', cell: (m) => (m.global_qps ? <Num n={m.global_qps} /> : 'none'), class: 'right' },
                { title: 'Budget (spent / limit)', cell: (m) => <Budget b={m} />, class: 'right' },
                { title: 'Created', cell: (m) => <Time t={m.createdAt} /> },
              ]}
            />
            <PagePager total={l.total} page={page} limit={limit} onPage={(p) => setQuery({ page: p > 1 ? p : undefined }, { push: true })} />
          </>
        )}
      </Async>
      {creating && (
        <Modal title="New master" onClose={() => setCreating(false)}>
          <ApiForm
            label="new master"
            submitLabel="Create"
            cancel={() => setCreating(false)}
            onSubmit={async (body) => {
              const m = await api.post('/admin/masters', { body: body as { name: string; group: string } });
              setCreating(false);
              setCreated({ id: m.id, key: m.master_key ?? '' });
              list.reload();
            }}
          >
            {(errors) => (
              <>
                <Field label="Name" name="name" error={errors.name}>
                  <input name="name" required />
                </Field>
                <Field label="Group" name="group" error={errors.group} hint="the pricing tier and routing group">
                  <input name="group" required />
                </Field>
                <Field label="Max child keys" name="max_child_keys" error={errors.max_child_keys}>
                  <input name="max_child_keys" type="number" min={0} />
                </Field>
                <Field label="Global QPS (0: none)" name="global_qps" error={errors.global_qps}>
                  <input name="global_qps" type="number" min={0} />
                </Field>
                <BudgetInputs errors={errors} />
              </>
            )}
          </ApiForm>
        </Modal>
      )}
      {created && <SecretOnce label="Master key" secret={created.key} onClose={() => (setCreated(null), navigate(href(`/tenants/${created.id}`)))} />}
    </section>
  );
}
