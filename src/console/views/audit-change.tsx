/**
 * What an audit entry changed, read from its masked before and after documents. The service's `diff` pairs
 * every field of the two documents, which reads wrong wherever they are not two states of one record: a
 * create has no before (or, for a record made under another, such as a child key issued under its master,
 * the before is that other record), a delete's after is only an acknowledgement, and an action's answer
 * (access, reset key) names only some fields. So: a create shows its new values, a delete the values that
 * went, an update the fields of its answer whose value moved, and an action with nothing read before (a
 * revoke through its master, a registry refresh, a batch status change) the answer it gave.
 */
import type { ComponentChildren } from 'preact';

export interface AuditEntry {
  method?: string;
  route?: string;
  action?: string;
  before?: unknown;
  after?: unknown;
  diff?: unknown;
}

type Doc = Record<string, unknown>;
const isDoc = (v: unknown): v is Doc => v !== null && typeof v === 'object' && !Array.isArray(v);
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export type Change =
  | { kind: 'created'; values: Doc }
  | { kind: 'removed'; values: Doc }
  | { kind: 'result'; values: Doc }
  | { kind: 'updated'; fields: Record<string, { from: unknown; to: unknown }> }
  | { kind: 'value'; value: unknown };

/**
 * Actions that make records (the audit names an action by the route's literal segments): `create` (POST on a
 * collection), `batch` (many at once) and `keys` (a child key issued under its master, POST
 * /admin/masters/{id}/keys, whose before is the master: its ids may even be equal).
 */
const creates = new Set(['create', 'batch', 'keys']);

/** Which kind of change an entry is, and its lines. */
export function changeOf(e: AuditEntry): Change {
  const { before, after } = e;
  const answer = (kind: 'created' | 'removed' | 'result', doc: unknown): Change => (isDoc(doc) ? { kind, values: doc } : { kind: 'value', value: doc ?? null });
  if (e.method === 'DELETE' || /(^|\.)delete$/.test(e.action ?? '')) return answer('removed', isDoc(before) ? before : after);
  // Another record than the one read before (any other create under a resource): a create too.
  const otherRecord = isDoc(before) && isDoc(after) && 'id' in before && 'id' in after && !same(before.id, after.id);
  if (creates.has(e.action ?? '') || otherRecord) return answer('created', after);
  if (!isDoc(before) || !isDoc(after)) return answer('result', after);
  const fields: Record<string, { from: unknown; to: unknown }> = {};
  for (const [k, to] of Object.entries(after)) if (!same(before[k], to)) fields[k] = { from: before[k] ?? null, to };
  return { kind: 'updated', fields };
}

const show = (v: unknown) => (typeof v === 'string' ? v : Array.isArray(v) && v.length > 3 ? `${v.length} items` : JSON.stringify(v));

export function AuditChange({ entry }: { entry: AuditEntry }): ComponentChildren {
  const c = changeOf(entry);
  if (c.kind === 'value') return c.value === null ? '–' : <code>{show(c.value)}</code>;
  const lines =
    c.kind === 'updated'
      ? Object.entries(c.fields).map(([k, v]) => (
          <li key={k}>
            <code>{k}</code>: <span class="from">{show(v.from)}</span> → <span class="to">{show(v.to)}</span>
          </li>
        ))
      : Object.entries(c.values).map(([k, v]) => (
          <li key={k}>
            <code>{k}</code>: <span class={c.kind === 'created' ? 'new' : c.kind === 'removed' ? 'gone' : ''}>{show(v)}</span>
          </li>
        ));
  if (lines.length === 0) return <span class="muted">no field changed</span>;
  // A long change shows its first fields; the rest open on demand, so one entry cannot fill the page.
  const first = 6;
  return (
    <ul class={`diff diff-${c.kind}`} data-kind={c.kind}>
      {c.kind !== 'updated' && <li class="diff-kind">{c.kind}:</li>}
      {lines.slice(0, first)}
      {lines.length > first && (
        <li>
          <details>
            <summary>{lines.length - first} more fields</summary>
            <ul class="diff">{lines.slice(first)}</ul>
          </details>
        </li>
      )}
    </ul>
  );
}
