/** The console's building blocks: states (loading, empty, error), tables, times, dialogs, forms. */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ApiError } from '../api/client';
import { navigate } from '../router';
import { localTime, num, short, utcTime } from './format';
import type { Loaded } from './hooks';

export function Link({ to, children, class: cls, current, label }: { to: string; children: ComponentChildren; class?: string; current?: boolean; label?: string }) {
  return (
    <a
      class={cls}
      aria-current={current ? 'page' : undefined}
      aria-label={label}
      href={to}
      onClick={(e) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}

export const Loading = ({ what = '' }: { what?: string }) => (
  <p class="state loading" role="status" aria-live="polite">
    Loading{what ? ` ${what}` : ''}…
  </p>
);

export const Empty = ({ children }: { children: ComponentChildren }) => <p class="state empty">{children}</p>;

/** An API error: the envelope's message, its field errors, and the request id to quote. */
export function ErrorBox({ error, onRetry }: { error: ApiError; onRetry?: () => void }) {
  const fields = Object.entries(error.data ?? {}).filter(([, v]) => typeof v === 'string');
  return (
    <div class="state error" role="alert">
      <strong>{error.message}</strong>
      {error.status ? <span class="muted"> ({error.status} {error.code})</span> : null}
      {fields.length > 0 && (
        <ul>
          {fields.map(([k, v]) => (
            <li key={k}>
              <code>{k}</code> {String(v)}
            </li>
          ))}
        </ul>
      )}
      {error.requestId && (
        <div class="muted">
          X-Request-ID: <code class="request-id">{error.requestId}</code>
        </div>
      )}
      {onRetry && (
        <button type="button" onClick={onRetry}>
          Retry
        </button>
      )}
    </div>
  );
}

/** Renders a loaded value, or its loading / error / empty state. */
export function Async<T>({ state, empty, children }: { state: Loaded<T>; empty?: (d: T) => boolean | string; children: (d: T) => ComponentChildren }) {
  if (state.error) return <ErrorBox error={state.error} onRetry={state.reload} />;
  if (state.data === undefined) return <Loading />;
  const e = empty?.(state.data);
  if (e) return <Empty>{typeof e === 'string' ? e : 'Nothing here yet.'}</Empty>;
  return <>{children(state.data)}</>;
}

export const Time = ({ t }: { t: string | number | null | undefined }) => (
  <time title={utcTime(t)} dateTime={t === null || t === undefined ? undefined : String(t)}>
    {localTime(t)}
  </time>
);

export const Num = ({ n, compact }: { n: number | null | undefined; compact?: boolean }) => (
  <span class="num" title={n === null || n === undefined ? undefined : String(n)}>
    {compact ? short(n) : num(n)}
  </span>
);

export interface Column<R> {
  title: string;
  cell: (row: R) => ComponentChildren;
  class?: string;
}

export function Table<R>({ rows, columns, rowKey, onRow, selected, label }: {
  rows: R[];
  columns: Column<R>[];
  rowKey: (r: R) => string | number;
  onRow?: (r: R) => void;
  selected?: string | number;
  label: string;
}) {
  return (
    <div class="table-wrap">
      <table aria-label={label}>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.title} class={c.class} scope="col">
                {c.title}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr
              key={rowKey(r)}
              class={`${onRow ? 'clickable' : ''} ${selected !== undefined && rowKey(r) === selected ? 'selected' : ''}`}
              tabIndex={onRow ? 0 : undefined}
              onClick={onRow ? () => onRow(r) : undefined}
              onKeyDown={onRow ? (e) => (e.key === 'Enter' || e.key === ' ') && (e.preventDefault(), onRow(r)) : undefined}
            >
              {columns.map((c) => (
                <td key={c.title} class={c.class}>
                  {c.cell(r)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function Pager({ total, offset, limit, onOffset }: { total: number; offset: number; limit: number; onOffset: (o: number) => void }) {
  const last = Math.min(offset + limit, total);
  return (
    <nav class="pager" aria-label="pages">
      <span>
        {total === 0 ? '0' : `${num(offset + 1)}–${num(last)}`} of <strong class="total">{num(total)}</strong>
      </span>
      <button type="button" disabled={offset <= 0} onClick={() => onOffset(Math.max(0, offset - limit))}>
        ← Newer
      </button>
      <button type="button" disabled={last >= total} onClick={() => onOffset(offset + limit)}>
        Older →
      </button>
    </nav>
  );
}

/** A page-numbered pager (the list endpoints that take page and limit). */
export function PagePager({ total, page, limit, onPage }: { total: number; page: number; limit: number; onPage: (p: number) => void }) {
  const pages = Math.max(1, Math.ceil(total / limit));
  return (
    <nav class="pager" aria-label="pages">
      <span>
        page {page} of {pages} · <strong class="total">{num(total)}</strong> in all
      </span>
      <button type="button" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        ← Previous
      </button>
      <button type="button" disabled={page >= pages} onClick={() => onPage(page + 1)}>
        Next →
      </button>
    </nav>
  );
}

/** A modal dialog (the native one: focus is kept inside, Escape closes it). */
export function Modal({ title, onClose, children }: { title: string; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current!;
    if (!d.open) d.showModal();
    const close = () => onClose();
    d.addEventListener('close', close);
    return () => d.removeEventListener('close', close);
  }, []);
  return (
    <dialog ref={ref} aria-label={title}>
      <h2>{title}</h2>
      {children}
    </dialog>
  );
}

/** Asks before a destructive action, saying exactly what will happen; shows the action's error in place. */
export function Confirm({ title, children, action, confirmLabel = 'Confirm', danger, onDone, onCancel }: {
  title: string;
  children: ComponentChildren;
  action: () => Promise<unknown>;
  confirmLabel?: string;
  danger?: boolean;
  onDone: (result: unknown) => void;
  onCancel: () => void;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | undefined>();
  return (
    <Modal title={title} onClose={onCancel}>
      <div class="confirm-text">{children}</div>
      {error && <ErrorBox error={error} />}
      <div class="actions">
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
        <button
          type="button"
          class={danger ? 'danger' : 'primary'}
          disabled={busy}
          onClick={async () => {
            setBusy(true);
            setError(undefined);
            try {
              onDone(await action());
            } catch (err) {
              setError(err as ApiError);
            } finally {
              setBusy(false);
            }
          }}
        >
          {confirmLabel}
        </button>
      </div>
    </Modal>
  );
}

/** A secret shown once: copy button and the warning that it cannot be shown again. */
export function SecretOnce({ label, secret, onClose }: { label: string; secret: string; onClose: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <Modal title={label} onClose={onClose}>
      <p class="warning">Copy it now: you will not see it again.</p>
      <div class="secret">
        <code class="secret-value">{secret}</code>
        <button
          type="button"
          onClick={async () => {
            try {
              await navigator.clipboard.writeText(secret);
              setCopied(true);
            } catch {
              setCopied(false);
            }
          }}
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
      </div>
      <div class="actions">
        <button type="button" class="primary" onClick={onClose}>
          I have copied it
        </button>
      </div>
    </Modal>
  );
}

/** A labelled form field with the error the API gave for it. */
export function Field({ label, name, error, children, hint }: { label: string; name: string; error?: string; children: ComponentChildren; hint?: string }) {
  return (
    <label class={`field ${error ? 'invalid' : ''}`} data-field={name}>
      <span class="label">{label}</span>
      {children}
      {hint && <span class="hint">{hint}</span>}
      {error && (
        <span class="field-error" role="alert">
          {error}
        </span>
      )}
    </label>
  );
}

export function Tile({ label, value, sub, title }: { label: string; value: ComponentChildren; sub?: ComponentChildren; title?: string }) {
  return (
    <div class="tile" title={title}>
      <div class="tile-label">{label}</div>
      <div class="tile-value">{value}</div>
      {sub && <div class="tile-sub">{sub}</div>}
    </div>
  );
}

export const Badge = ({ value }: { value: string }) => <span class={`badge badge-${value}`}>{value}</span>;
