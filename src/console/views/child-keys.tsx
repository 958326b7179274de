/**
 * Child keys, the same for the admin (a master's page, /admin routes) and a
 * tenant (own keys, /v1/tokens): the list, issue (secret shown once), edit
 * limits, suspend or resume, namespaces (admin), revoke, each confirmed where
 * it refuses traffic.
 */
import { useState } from 'preact/hooks';
import { Async, Badge, Confirm, Field, Modal, Num, SecretOnce, Table, Time } from '../ui/components';
import { ApiForm } from '../ui/form';
import type { Loaded } from '../ui/hooks';
import type { Success } from '../api/client';
import { KeyForm } from './key-form';
import { Budget } from './money';

export type ChildKey = Success<'/v1/tokens', 'get'>['items'][number];

/** The calls behind the actions: /admin/... for the admin, /v1/tokens... for a tenant. */
export interface KeyCalls {
  issue: (body: Record<string, unknown>) => Promise<{ key_secret?: string }>;
  update: (id: number, body: Record<string, unknown>) => Promise<unknown>;
  revoke: (id: number) => Promise<unknown>;
  /** Default and allowed namespaces (the admin's key access route). */
  access?: (id: number, body: Record<string, unknown>) => Promise<unknown>;
}

type Dialog = { issue: true } | { edit: ChildKey } | { suspend: ChildKey } | { resume: ChildKey } | { revoke: ChildKey } | { access: ChildKey } | null;

const keyName = (k: ChildKey) => `#${k.id}${k.name ? ` (${k.name})` : ''}`;

export function ChildKeys({ list, calls, onChange, footer }: {
  list: Loaded<{ items: ChildKey[]; total: number }>;
  calls: KeyCalls;
  onChange: () => void;
  footer?: (total: number) => preact.ComponentChildren;
}) {
  const [dialog, setDialog] = useState<Dialog>(null);
  const [secret, setSecret] = useState('');
  const close = () => setDialog(null);
  const done = () => (setDialog(null), onChange());
  return (
    <>
      <div class="toolbar">
        <button type="button" class="primary" onClick={() => setDialog({ issue: true })}>
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
                {
                  title: 'Quota',
                  cell: (k) => (k.quota_limit === -1 || k.quota_limit === undefined ? 'unlimited' : <><Num n={k.quota_used} /> / <Num n={k.quota_limit} /> {k.quota_reset_type !== 'never' && <span class="muted">{k.quota_reset_type}</span>}</>),
                },
                { title: 'Budget (spent / limit)', cell: (k) => <Budget b={k} /> },
                { title: 'Models', cell: (k) => (k.model_limits_enabled && k.model_limits ? <span class="ellipsis" title={k.model_limits}>{k.model_limits}</span> : 'all') },
                { title: 'Requests', cell: (k) => <Num n={k.request_count} />, class: 'right' },
                { title: 'Last used', cell: (k) => (k.last_accessed_at ? <Time t={k.last_accessed_at} /> : 'never') },
                { title: 'Expires', cell: (k) => (k.expires_at ? <Time t={k.expires_at} /> : 'never') },
                {
                  title: 'Actions',
                  cell: (k) =>
                    k.revoked ? null : (
                      <span class="row-actions">
                        <button type="button" onClick={() => setDialog({ edit: k })}>Edit</button>
                        {k.status === 'active' ? (
                          <button type="button" onClick={() => setDialog({ suspend: k })}>Suspend</button>
                        ) : (
                          <button type="button" onClick={() => setDialog({ resume: k })}>Resume</button>
                        )}
                        {calls.access && <button type="button" onClick={() => setDialog({ access: k })}>Access</button>}
                        <button type="button" class="danger" onClick={() => setDialog({ revoke: k })}>Revoke</button>
                      </span>
                    ),
                },
              ]}
            />
            {footer?.(l.total)}
          </>
        )}
      </Async>
      {dialog && 'issue' in dialog && (
        <Modal title="Issue a child key" onClose={close}>
          <KeyForm
            label="issue child key"
            cancel={close}
            onSubmit={async (body) => {
              const k = await calls.issue(body);
              done();
              setSecret(k.key_secret ?? '');
            }}
          />
        </Modal>
      )}
      {dialog && 'edit' in dialog && (
        <Modal title={`Edit key ${keyName(dialog.edit)}`} onClose={close}>
          <KeyForm label="edit child key" edit defaults={dialog.edit} cancel={close} onSubmit={async (body) => (await calls.update(dialog.edit.id, body), done())} />
        </Modal>
      )}
      {dialog && 'suspend' in dialog && (
        <Confirm title="Suspend key" confirmLabel="Suspend" danger onCancel={close} onDone={done} action={() => calls.update(dialog.suspend.id, { status: 'suspended' })}>
          <p>Key {keyName(dialog.suspend)} is refused until it is resumed. Its limits and usage are kept.</p>
        </Confirm>
      )}
      {dialog && 'resume' in dialog && (
        <Confirm title="Resume key" confirmLabel="Resume" onCancel={close} onDone={done} action={() => calls.update(dialog.resume.id, { status: 'active' })}>
          <p>Key {keyName(dialog.resume)} is accepted again.</p>
        </Confirm>
      )}
      {dialog && 'revoke' in dialog && (
        <Confirm title="Revoke key" confirmLabel="Revoke" danger onCancel={close} onDone={done} action={() => calls.revoke(dialog.revoke.id)}>
          <p>Key {keyName(dialog.revoke)} is refused from now on. Revoking is final.</p>
        </Confirm>
      )}
      {dialog && 'access' in dialog && calls.access && (
        <Modal title={`Access of key ${keyName(dialog.access)}`} onClose={close}>
          <ApiForm label="key access" submitLabel="Save" cancel={close} onSubmit={async (body) => (await calls.access!(dialog.access.id, body), done())}>
            {(e) => (
              <>
                <Field label="Default namespace" name="default_namespace" error={e.default_namespace}>
                  <input name="default_namespace" defaultValue={dialog.access.default_namespace ?? ''} />
                </Field>
                <Field label="Allowed namespaces (comma-separated)" name="allowed_namespaces" error={e.allowed_namespaces}>
                  <input name="allowed_namespaces" data-type="list" defaultValue={(dialog.access.allowed_namespaces ?? []).join(', ')} />
                </Field>
              </>
            )}
          </ApiForm>
        </Modal>
      )}
      {secret && <SecretOnce label="Child key secret" secret={secret} onClose={() => setSecret('')} />}
    </>
  );
}
