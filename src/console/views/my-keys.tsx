/** A tenant's own child keys: list, issue (secret shown once), edit limits, suspend, revoke. */
import { useState } from 'preact/hooks';
import { api } from '../session';
import { setQuery, useLocation } from '../router';
import { Async, Badge, Confirm, Modal, Num, PagePager, SecretOnce, Table, Time } from '../ui/components';
import { useApi } from '../ui/hooks';
import { KeyForm } from './key-form';
import type { Success } from '../api/client';

type Key = Success<'/v1/tokens', 'get'>['items'][number];

export function MyKeys() {
  const { query } = useLocation();
  const page = Math.max(1, Number(query.get('page')) || 1);
  const limit = 50;
  const list = useApi((signal) => api.get('/v1/tokens', { query: { page, limit }, signal }), [page]);
  const [issuing, setIssuing] = useState(false);
  const [editing, setEditing] = useState<Key | null>(null);
  const [revoking, setRevoking] = useState<Key | null>(null);
  const [secret, setSecret] = useState('');
  return (
    <section>
      <h1>Keys</h1>
      <div class="toolbar">
        <button type="button" class="primary" onClick={() => setIssuing(true)}>
          Issue key
        </button>
      </div>
      <Async state={list} empty={(l) => (l.total === 0 ? 'No child keys yet.' : false)}>
        {(l) => (
          <>
            <Table
              label="child keys"
              rows={l.items}
              rowKey={(k) => k.id}
              columns={[
                { title: 'ID', cell: (k) => k.id },
                { title: 'Name', cell: (k) => k.name || '–' },
                { title: 'Prefix', cell: (k) => <code>{k.key_prefix}</code> },
                { title: 'Status', cell: (k) => <Badge value={k.revoked ? 'revoked' : k.status} /> },
                { title: 'Quota', cell: (k) => (k.quota_limit === -1 || k.quota_limit === undefined ? 'unlimited' : <><Num n={k.quota_used} /> / <Num n={k.quota_limit} /></>) },
                { title: 'Requests', cell: (k) => <Num n={k.request_count} />, class: 'right' },
                { title: 'Expires', cell: (k) => (k.expires_at ? <Time t={k.expires_at} /> : 'never') },
                {
                  title: 'Actions',
                  cell: (k) =>
                    k.revoked ? null : (
                      <span class="row-actions">
                        <button type="button" onClick={() => setEditing(k)}>Edit</button>
                        <button type="button" class="danger" onClick={() => setRevoking(k)}>Revoke</button>
                      </span>
                    ),
                },
              ]}
            />
            <PagePager total={l.total} page={page} limit={limit} onPage={(p) => setQuery({ page: p > 1 ? p : undefined }, { push: true })} />
          </>
        )}
      </Async>
      {issuing && (
        <Modal title="Issue a child key" onClose={() => setIssuing(false)}>
          <KeyForm
            label="issue child key"
            cancel={() => setIssuing(false)}
            onSubmit={async (body) => {
              const k = await api.post('/v1/tokens', { body });
              setIssuing(false);
              setSecret(k.key_secret ?? '');
              list.reload();
            }}
          />
        </Modal>
      )}
      {editing && (
        <Modal title={`Edit key #${editing.id}`} onClose={() => setEditing(null)}>
          <KeyForm
            label="edit child key"
            edit
            defaults={editing}
            cancel={() => setEditing(null)}
            onSubmit={async (body) => {
              await api.put('/v1/tokens/{id}', { path: { id: editing.id }, body });
              setEditing(null);
              list.reload();
            }}
          />
        </Modal>
      )}
      {revoking && (
        <Confirm title="Revoke key" danger confirmLabel="Revoke" onCancel={() => setRevoking(null)} onDone={() => (setRevoking(null), list.reload())} action={() => api.post('/v1/tokens/{id}/revoke', { path: { id: revoking.id } })}>
          <p>
            Key #{revoking.id} {revoking.name ? `(${revoking.name})` : ''} is refused from now on. Revoking is final.
          </p>
        </Confirm>
      )}
      {secret && <SecretOnce label="Child key secret" secret={secret} onClose={() => setSecret('')} />}
    </section>
  );
}
