/**
 * Many upstream keys at once (POST /admin/api-keys/batch): one secret a line, the same group, weight, status and
 * auto-ban for all. The API takes all or none: a refused line is named by its number (the field `items.N.…`),
 * and the answer lists each key made, in the order of the lines.
 */
import { useState } from 'preact/hooks';
import { api } from '../session';
import { ApiError } from '../api/client';
import { Badge, ErrorBox, Field, Modal, Table } from '../ui/components';
import type { Success } from '../api/client';

type Made = Success<'/admin/api-keys/batch', 'post'>['items'][number] & { line: number };

/** Lines of the textarea: one secret each, blank lines skipped (their numbers stay those the user sees). */
const secretsOf = (text: string) => text.split('\n').map((s, i) => ({ line: i + 1, secret: s.trim() })).filter((l) => l.secret);

export function BatchKeys({ groups, groupId, onClose, onDone }: {
  groups: { id: number; name: string }[];
  groupId?: number;
  onClose: () => void;
  onDone: () => void;
}) {
  const [error, setError] = useState<ApiError | undefined>();
  const [lineErrors, setLineErrors] = useState<string[]>([]);
  const [made, setMade] = useState<Made[] | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (form: HTMLFormElement) => {
    const f = new FormData(form);
    const lines = secretsOf(String(f.get('secrets') ?? ''));
    const common = {
      group_id: Number(f.get('group_id')),
      weight: f.get('weight') === '' ? undefined : Number(f.get('weight')),
      status: String(f.get('status')) as 'active' | 'manual_disabled',
      auto_ban: f.get('auto_ban') === 'on',
    };
    setBusy(true);
    setError(undefined);
    setLineErrors([]);
    try {
      if (lines.length === 0) throw new ApiError(0, 'client', 'no secrets: write one secret a line', { secrets: 'one secret a line' }, '');
      const r = await api.post('/admin/api-keys/batch', { body: { items: lines.map((l) => ({ ...common, api_key: l.secret })) } });
      setMade(r.items.map((k, i) => ({ ...k, line: lines[i]?.line ?? i + 1 })));
      onDone();
    } catch (err) {
      const e = err instanceof ApiError ? err : new ApiError(0, 'client', String(err), {}, '');
      setError(e);
      // `body.items.3.api_key` → the line it came from.
      setLineErrors(
        Object.entries(e.data ?? {}).flatMap(([k, v]) => {
          const m = /items\.(\d+)\.(\w+)/.exec(k);
          const l = m ? lines[Number(m[1])] : undefined;
          return l ? [`line ${l.line}: ${m![2]} ${String(v)}`] : [];
        }),
      );
    } finally {
      setBusy(false);
    }
  };

  return (
    <Modal title="New upstream keys (batch)" onClose={onClose}>
      {made ? (
        <div class="batch-results">
          <p class="good">
            {made.length} {made.length === 1 ? 'key' : 'keys'} created (secrets masked):
          </p>
          <Table
            label="keys created"
            rows={made}
            rowKey={(k) => k.id}
            columns={[
              { title: 'Line', cell: (k) => k.line },
              { title: 'ID', cell: (k) => k.id },
              { title: 'Key', cell: (k) => <code>{k.api_key}</code> },
              { title: 'Group', cell: (k) => groups.find((g) => g.id === k.group_id)?.name ?? `#${k.group_id}` },
              { title: 'Weight', cell: (k) => k.weight, class: 'right' },
              { title: 'Status', cell: (k) => <Badge value={k.status} /> },
            ]}
          />
          <div class="actions">
            <button type="button" class="primary" onClick={onClose}>
              Done
            </button>
          </div>
        </div>
      ) : (
        <form
          class="api-form"
          aria-label="upstream keys batch"
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            void submit(e.currentTarget);
          }}
        >
          <Field label="Provider group" name="group_id" error={error?.fields.group_id}>
            <select name="group_id" defaultValue={String(groupId ?? groups[0]?.id ?? '')}>
              {groups.map((g) => (
                <option key={g.id} value={String(g.id)}>
                  #{g.id} {g.name}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Secrets, one a line" name="secrets" error={error?.fields.secrets} hint="all are created, or none when one is refused">
            <textarea name="secrets" rows={6} autoComplete="off" spellcheck={false} />
          </Field>
          <Field label="Weight (each)" name="weight" error={error?.fields.weight}>
            <input name="weight" inputMode="numeric" defaultValue="1" />
          </Field>
          <Field label="Status" name="status">
            <select name="status" defaultValue="active">
              <option value="active">active</option>
              <option value="manual_disabled">manual_disabled</option>
            </select>
          </Field>
          <label class="check">
            <input type="checkbox" name="auto_ban" defaultChecked /> Ban automatically on upstream failures
          </label>
          {lineErrors.length > 0 && (
            <ul class="line-errors field-error" role="alert">
              {lineErrors.map((l) => (
                <li key={l}>{l}</li>
              ))}
            </ul>
          )}
          {error && <ErrorBox error={error} />}
          <div class="actions">
            <button type="button" onClick={onClose}>
              Cancel
            </button>
            <button type="submit" class="primary" disabled={busy}>
              Create all
            </button>
          </div>
        </form>
      )}
    </Modal>
  );
}
