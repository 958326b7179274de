/** A form that posts its fields and shows the API's 400 messages at the fields they name. */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError } from '../api/client';
import { ErrorBox } from './components';

export type FormValues = Record<string, string | boolean>;

/**
 * Builds a body from the named inputs: numbers for inputMode=numeric or type=number, booleans for checkboxes,
 * empty left out (or null with data-empty="null": a field whose emptiness means "none", such as a budget).
 */
export function readForm(form: HTMLFormElement): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const el of Array.from(form.elements) as HTMLInputElement[]) {
    if (!el.name || el.disabled) continue;
    if (el.type === 'checkbox') out[el.name] = el.checked;
    else if (el.value.trim() === '') {
      if (el.dataset.empty === 'null') out[el.name] = null;
    }
    else if (el.type === 'number' || el.inputMode === 'numeric' || el.dataset.type === 'number') {
      // Not a number: sent as typed, so the API names the field and says why.
      const n = Number(el.value);
      out[el.name] = Number.isFinite(n) ? n : el.value;
    }
    else if (el.dataset.type === 'list') out[el.name] = el.value.split(',').map((s) => s.trim()).filter(Boolean);
    else if (el.dataset.type === 'json') {
      try {
        out[el.name] = JSON.parse(el.value);
      } catch {
        out[el.name] = el.value;
      }
    } else out[el.name] = el.value;
  }
  return out;
}

export function ApiForm({ onSubmit, children, submitLabel, label, cancel }: {
  onSubmit: (body: Record<string, any>) => Promise<unknown>;
  children: (errors: Record<string, string>) => ComponentChildren;
  submitLabel: string;
  label: string;
  cancel?: () => void;
}) {
  const [error, setError] = useState<ApiError | undefined>();
  const [busy, setBusy] = useState(false);
  return (
    <form
      class="api-form"
      aria-label={label}
      noValidate
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setError(undefined);
        try {
          await onSubmit(readForm(e.currentTarget));
        } catch (err) {
          setError(err instanceof ApiError ? err : new ApiError(0, 'client', String(err), {}, ''));
        } finally {
          setBusy(false);
        }
      }}
    >
      {children(error?.fields ?? {})}
      {error && <ErrorBox error={error} />}
      <div class="actions">
        {cancel && (
          <button type="button" onClick={cancel}>
            Cancel
          </button>
        )}
        <button type="submit" class="primary" disabled={busy}>
          {submitLabel}
        </button>
      </div>
    </form>
  );
}
