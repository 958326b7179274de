/** Models: the capability registry (create, edit, delete) and the registry's refresh, status and rollback. */
import { useState } from 'preact/hooks';
import { api } from '../session';
import { Async, Badge, Confirm, ErrorBox, Field, Num, Table, Tile, Time } from '../ui/components';
import { useAction, useApi } from '../ui/hooks';
import { EditDialog, RowActions } from '../ui/crud';
import type { Success } from '../api/client';
import { money, moneyExact } from '../ui/format';
import { Money } from './money';

type Model = Success<'/admin/models', 'get'>[number];
const kinds = ['chat', 'completion', 'embedding', 'image', 'audio', 'rerank'];
const flags = ['supports_fim', 'supports_functions', 'supports_tool_choice', 'supports_vision'] as const;

/** An input or output price; none set means the price per token applies, shown muted. */
const Price = ({ n, fallback }: { n: number | null | undefined; fallback: number }) =>
  n === null || n === undefined ? (
    <span class="muted" title="none set: the price per token applies">
      {money(fallback)}
    </span>
  ) : (
    <Money n={n} />
  );

export function Models() {
  const models = useApi((signal) => api.get('/admin/models', { signal }), []);
  const registry = useApi((signal) => api.get('/admin/model-registry/status', { signal }), []);
  const [editing, setEditing] = useState<{ model: Model | undefined } | null>(null);
  const [deleting, setDeleting] = useState<Model | null>(null);
  const [rollback, setRollback] = useState(false);
  const refresh = useAction(async (ref: string) => {
    await api.post('/admin/model-registry/refresh', { body: ref ? { ref } : {} });
    registry.reload();
    models.reload();
  });
  return (
    <section>
      <h1>Models</h1>
      <h2>Registry</h2>
      <Async state={registry}>
        {(r) => (
          <>
            <div class="tiles">
              <Tile label="Configured" value={r.configured ? 'yes' : 'no'} sub={r.source_url ?? 'SVC_MODEL_REGISTRY_URL not set'} />
              <Tile label="Current" value={r.current?.ref ?? '–'} sub={r.current?.applied_at ? <Time t={r.current.applied_at} /> : undefined} />
              <Tile label="Previous" value={r.previous?.ref ?? '–'} />
              <Tile label="Models" value={<Num n={r.total_models} />} sub={`${r.registry_models} from the registry`} />
            </div>
            <form
              class="toolbar"
              aria-label="registry refresh"
              onSubmit={(e) => {
                e.preventDefault();
                void refresh.go(String(new FormData(e.currentTarget).get('ref') ?? '').trim());
              }}
            >
              <label>
                Ref <input name="ref" placeholder="main" />
              </label>
              <button type="submit" disabled={refresh.busy || !r.configured}>Refresh</button>
              <button type="button" disabled={!r.previous} onClick={() => setRollback(true)}>Roll back</button>
            </form>
            {refresh.error && <ErrorBox error={refresh.error} />}
          </>
        )}
      </Async>
      <h2>Capabilities</h2>
      <div class="toolbar">
        <button type="button" class="primary" onClick={() => setEditing({ model: undefined })}>New model</button>
      </div>
      <Async state={models} empty={(m) => (m.length === 0 ? 'No models yet.' : false)}>
        {(list) => (
          <Table
            label="models"
            rows={list}
            rowKey={(m) => m.id}
            columns={[
              { title: 'Name', cell: (m) => m.name },
              { title: 'Kind', cell: (m) => m.kind },
              { title: 'Context', cell: (m) => <Num n={m.context_window} />, class: 'right' },
              { title: 'Max output', cell: (m) => <Num n={m.max_output_tokens} />, class: 'right' },
              { title: 'Price / token', cell: (m) => <Money n={m.cost_per_token} />, class: 'right' },
              { title: 'Input / output price', cell: (m) => <><Price n={m.cost_per_input_token} fallback={m.cost_per_token} /> / <Price n={m.cost_per_output_token} fallback={m.cost_per_token} /></>, class: 'right' },
              { title: 'Capabilities', cell: (m) => flags.filter((f) => m[f]).map((f) => f.replace('supports_', '')).join(', ') || '–' },
              { title: 'Source', cell: (m) => <Badge value={m.source} /> },
              { title: 'Actions', cell: (m) => <RowActions onEdit={() => setEditing({ model: m })} onDelete={() => setDeleting(m)} /> },
            ]}
          />
        )}
      </Async>
      {editing && (
        <EditDialog<Model>
          what="model"
          label="model"
          current={editing.model}
          title={editing.model ? `Edit ${editing.model.name}` : undefined}
          create={(body) => api.post('/admin/models', { body: body as never })}
          update={(m, body) => api.put('/admin/models/{id}', { path: { id: m.id }, body })}
          onClose={() => setEditing(null)}
          onSaved={() => (setEditing(null), models.reload())}
        >
          {(e, m) => (
            <>
              <Field label="Name" name="name" error={e.name}><input name="name" defaultValue={m?.name ?? ''} /></Field>
              <Field label="Kind" name="kind" error={e.kind}>
                <select name="kind" defaultValue={m?.kind ?? 'chat'}>{kinds.map((k) => <option key={k} value={k}>{k}</option>)}</select>
              </Field>
              <Field label="Context window" name="context_window" error={e.context_window}><input name="context_window" inputMode="numeric" defaultValue={m ? String(m.context_window) : ''} /></Field>
              <Field label="Max output tokens" name="max_output_tokens" error={e.max_output_tokens}><input name="max_output_tokens" inputMode="numeric" defaultValue={m ? String(m.max_output_tokens) : ''} /></Field>
              <Field label="Price per token (currency unit)" name="cost_per_token" error={e.cost_per_token}><input name="cost_per_token" inputMode="numeric" defaultValue={m ? moneyExact(m.cost_per_token) : ''} /></Field>
              <Field label="Price per input token (empty: the price per token)" name="cost_per_input_token" error={e.cost_per_input_token}>
                <input name="cost_per_input_token" inputMode="numeric" data-empty="null" defaultValue={moneyExact(m?.cost_per_input_token)} />
              </Field>
              <Field label="Price per output token (empty: the price per token)" name="cost_per_output_token" error={e.cost_per_output_token}>
                <input name="cost_per_output_token" inputMode="numeric" data-empty="null" defaultValue={moneyExact(m?.cost_per_output_token)} />
              </Field>
              {flags.map((f) => (
                <label class="check" key={f}><input type="checkbox" name={f} defaultChecked={m?.[f] ?? false} /> {f}</label>
              ))}
            </>
          )}
        </EditDialog>
      )}
      {deleting && (
        <Confirm title="Delete model" danger confirmLabel="Delete" onCancel={() => setDeleting(null)} onDone={() => (setDeleting(null), models.reload())} action={() => api.delete('/admin/models/{id}', { path: { id: deleting.id } })}>
          <p>Model <strong>{deleting.name}</strong> is removed from the capability registry.</p>
        </Confirm>
      )}
      {rollback && (
        <Confirm title="Roll back the registry" confirmLabel="Roll back" onCancel={() => setRollback(false)} onDone={() => (setRollback(false), registry.reload(), models.reload())} action={() => api.post('/admin/model-registry/rollback', {})}>
          <p>The previous registry refresh is applied again.</p>
        </Confirm>
      )}
    </section>
  );
}
