/**
 * The scaffolding the list views share (upstreams, routing, models, keys): a
 * row's Edit/Delete buttons, a dialog whose form creates or updates one
 * record, and rows picked by checkbox for a batch status change.
 */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ErrorBox, Modal, type Column } from './components';
import { ApiForm } from './form';
import { useAction } from './hooks';

/** A row's actions; clicks stay out of the row's own click (which may select it). */
export function RowActions({ onEdit, onDelete, children }: { onEdit?: () => void; onDelete?: () => void; children?: ComponentChildren }) {
  return (
    <span class="row-actions" onClick={(e) => e.stopPropagation()}>
      {onEdit && (
        <button type="button" onClick={onEdit}>
          Edit
        </button>
      )}
      {children}
      {onDelete && (
        <button type="button" class="danger" onClick={onDelete}>
          Delete
        </button>
      )}
    </span>
  );
}

/** A dialog with a form for one record: created when there is no current one, else updated; 400s show at their fields. */
export function EditDialog<R>({ what, label, current, title, create, update, onClose, onSaved, children }: {
  what: string;
  /** The form's accessible name (tests and screen readers find it by it). */
  label: string;
  current: R | undefined;
  title?: string;
  create: (body: Record<string, any>) => Promise<unknown>;
  update: (current: R, body: Record<string, any>) => Promise<unknown>;
  onClose: () => void;
  onSaved: () => void;
  children: (errors: Record<string, string>, current: R | undefined) => ComponentChildren;
}) {
  return (
    <Modal title={title ?? (current ? `Edit ${what}` : `New ${what}`)} onClose={onClose}>
      <ApiForm
        label={label}
        submitLabel="Save"
        cancel={onClose}
        onSubmit={async (body) => {
          await (current ? update(current, body) : create(body));
          onSaved();
        }}
      >
        {(e) => children(e, current)}
      </ApiForm>
    </Modal>
  );
}

export interface Selection {
  ids: Set<number>;
  clear: () => void;
  /** The leading checkbox column that picks rows. */
  column: <R extends { id: number }>(what: string) => Column<R>;
}

export function useSelection(): Selection {
  const [ids, setIds] = useState<Set<number>>(new Set());
  const toggle = (id: number) =>
    setIds((s) => {
      const next = new Set(s);
      if (!next.delete(id)) next.add(id);
      return next;
    });
  return {
    ids,
    clear: () => setIds(new Set()),
    column: (what) => ({
      title: '',
      cell: (r) => <input type="checkbox" aria-label={`select ${what} ${r.id}`} checked={ids.has(r.id)} onChange={() => toggle(r.id)} onClick={(e) => e.stopPropagation()} />,
    }),
  };
}

/** "N selected" and one button per status for the picked rows; the action's error below. */
export function BatchStatus<S extends string>({ selection, statuses, run, onDone, children }: {
  selection: Selection;
  statuses: { status: S; label: string }[];
  run: (ids: number[], status: S) => Promise<unknown>;
  onDone: () => void;
  /** Buttons before the batch ones (New …). */
  children?: ComponentChildren;
}) {
  const batch = useAction(async (status: S) => {
    await run([...selection.ids], status);
    selection.clear();
    onDone();
  });
  return (
    <>
      <div class="toolbar">
        {children}
        <span class="muted">{selection.ids.size} selected</span>
        {statuses.map((s) => (
          <button key={s.status} type="button" disabled={!selection.ids.size || batch.busy} onClick={() => batch.go(s.status)}>
            {s.label}
          </button>
        ))}
      </div>
      {batch.error && <ErrorBox error={batch.error} />}
    </>
  );
}
