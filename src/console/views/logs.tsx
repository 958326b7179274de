/**
 * Logs: every filter of the logs list in the address, newest first, paging
 * with the exact total, a detail panel with the bodies pretty-printed, and
 * (admin) delete by condition with a confirmation that says what goes.
 * Tenants see their own records through /v1/logs with the same view.
 */
import { useState } from 'preact/hooks';
import { api, session } from '../session';
import { setQuery, useLocation } from '../router';
import { Async, Confirm, ErrorBox, Field, Num, Pager, Table, Time, type Column } from '../ui/components';
import { useAction, useApi } from '../ui/hooks';
import { fromLocalInput, localTime, ms, num, toLocalInput } from '../ui/format';
import type { Success } from '../api/client';
import { Money } from './money';

type LogPage = Success<'/admin/logs', 'get'>;
type Choices = Success<'/admin/logs/filters', 'get'>;
type LogRow = LogPage['items'][number];

const intOf = (v: string | null): number | undefined => (v !== null && v !== '' && /^\d+$/.test(v) ? Number(v) : undefined);

export function Logs() {
  const { query } = useLocation();
  const admin = session.get().identity?.type === 'admin';
  const filters = {
    master_id: admin ? intOf(query.get('master_id')) : undefined,
    key_id: intOf(query.get('key_id')),
    model: query.get('model') || undefined,
    group: query.get('group') || undefined,
    status_code: intOf(query.get('status_code')),
    error_only: query.get('error_only') === 'true' ? true : undefined,
    since: intOf(query.get('since')),
    until: intOf(query.get('until')),
  };
  const limit = Math.min(200, intOf(query.get('limit')) ?? 50);
  const offset = intOf(query.get('offset')) ?? 0;
  const detailId = intOf(query.get('detail'));
  const otherSeries = query.get('series') === 'other';
  const [deleting, setDeleting] = useState(false);
  const exporting = useAction(async () => {
    const q = { ...filters };
    const blob = admin ? await api.blob('/admin/logs/export', { query: q }) : await api.blob('/v1/logs/export', { query: { ...q, master_id: undefined } });
    const url = URL.createObjectURL(blob);
    const a = document.createElement('a');
    a.href = url;
    a.download = `logs-${new Date().toISOString().replace(/[:.]/g, '-')}.csv`;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  });

  const key = JSON.stringify({ filters, limit, offset });
  const choiceKey = JSON.stringify(filters);
  // Filter choices: only the values present in the window (and under the other filters), with their counts, from the rollups.
  const choices = useApi<Choices>(
    (signal) => {
      const q = { since: filters.since, until: filters.until, key_id: filters.key_id, model: filters.model, group: filters.group };
      return admin ? api.get('/admin/logs/filters', { query: { ...q, master_id: filters.master_id }, signal }) : api.get('/v1/logs/filters', { query: q, signal });
    },
    [choiceKey],
  );
  const page = useApi<LogPage>(
    (signal) =>
      admin
        ? api.get('/admin/logs', { query: { ...filters, limit, offset }, signal })
        : api.get('/v1/logs', { query: { ...filters, master_id: undefined, limit, offset }, signal }),
    [key],
  );

  const columns: Column<LogRow>[] = [
    { title: 'Time', cell: (r) => <Time t={r.createdAt} /> },
    ...(admin ? [{ title: 'Master', cell: (r: LogRow) => r.master_id }] : []),
    { title: 'Key', cell: (r) => r.key_id },
    { title: 'Model', cell: (r) => r.model },
    { title: 'Group', cell: (r) => r.group },
    { title: 'Status', cell: (r) => <span class={(r.status_code ?? 0) >= 400 ? 'bad' : 'good'}>{r.status_code}</span> },
    { title: 'Latency', cell: (r) => ms(r.latency_ms), class: 'right' },
    { title: 'Tokens in/out', cell: (r) => `${num(r.tokens_in)} / ${num(r.tokens_out)}`, class: 'right' },
    { title: 'Cost', cell: (r) => <Cost row={r} />, class: 'right' },
    { title: 'Error', cell: (r) => <span class="ellipsis">{r.error_message}</span> },
  ];

  return (
    <section class="logs">
      <h1>Logs</h1>
      <FilterForm filters={filters} admin={admin} choices={choices.data} />
      {choices.data && (
        <p class="muted status-classes" data-testid="status-classes">
          In this window: <Num n={choices.data.total} /> requests
          {choices.data.status_classes.values.map((c) => (
            <span key={c.value}>
              {' '}
              · {c.value} <Num n={c.requests} />
            </span>
          ))}
        </p>
      )}
      {otherSeries && (
        <p class="notice" role="status">
          These are the logs of the chart's <strong>other</strong> series' bucket: the models outside the top ones are not a single filter, so the list shows every model of
          that bucket.
        </p>
      )}
      <div class="toolbar">
        <button type="button" disabled={exporting.busy} onClick={() => exporting.go()}>
          {exporting.busy ? 'Exporting…' : 'Export CSV'}
        </button>
        <span class="muted">every record matching these filters, no row cap</span>
        {admin && (
          <button type="button" class="danger" onClick={() => setDeleting(true)}>
            Delete by condition…
          </button>
        )}
      </div>
      {exporting.error && <ErrorBox error={exporting.error} />}
      <div class="split">
        <div class="grow">
          <Async state={page} empty={(p) => (p.total === 0 ? 'No log records match these filters.' : false)}>
            {(p) => (
              <>
                <Pager total={p.total} offset={offset} limit={limit} onOffset={(o) => setQuery({ offset: o || undefined }, { push: true })} />
                <Table
                  label="log records"
                  rows={p.items}
                  columns={columns}
                  rowKey={(r) => r.id ?? 0}
                  selected={detailId}
                  onRow={(r) => setQuery({ detail: r.id }, { push: true })}
                />
              </>
            )}
          </Async>
        </div>
        {detailId !== undefined && page.data && (
          <Detail row={page.data.items.find((r) => r.id === detailId)} onClose={() => setQuery({ detail: undefined }, { push: true })} />
        )}
      </div>
      {deleting && <DeleteLogs filters={filters} onClose={() => setDeleting(false)} onDone={() => (setDeleting(false), page.reload())} />}
    </section>
  );
}

type Filters = {
  master_id?: number;
  key_id?: number;
  model?: string;
  group?: string;
  status_code?: number;
  error_only?: boolean;
  since?: number;
  until?: number;
};

/** Suggestions for a filter input: the values present, busiest first, with their request counts. */
function Suggest({ id, values }: { id: string; values: { value: string | number; requests: number }[] | undefined }) {
  return (
    <datalist id={id}>
      {(values ?? []).map((v) => (
        <option key={String(v.value)} value={String(v.value)} label={`${v.value} (${v.requests.toLocaleString()} requests)`} />
      ))}
    </datalist>
  );
}

function FilterForm({ filters, admin, choices }: { filters: Filters; admin: boolean; choices: Choices | undefined }) {
  return (
    <form
      class="filters"
      aria-label="log filters"
      onSubmit={(e) => {
        e.preventDefault();
        const f = new FormData(e.currentTarget);
        const s = (n: string) => String(f.get(n) ?? '').trim();
        setQuery(
          {
            master_id: admin ? s('master_id') : undefined,
            key_id: s('key_id'),
            model: s('model'),
            group: s('group'),
            status_code: s('status_code'),
            error_only: f.get('error_only') === 'on' ? 'true' : undefined,
            since: fromLocalInput(s('since')),
            until: fromLocalInput(s('until')),
            offset: undefined,
            detail: undefined,
            series: undefined,
          },
          { push: true },
        );
      }}
    >
      {admin && (
        <Field label="Master" name="master_id">
          <input name="master_id" inputMode="numeric" list="choices-masters" defaultValue={filters.master_id?.toString() ?? ''} />
          <Suggest id="choices-masters" values={choices?.masters.values} />
        </Field>
      )}
      <Field label="Key" name="key_id">
        <input name="key_id" inputMode="numeric" list="choices-keys" defaultValue={filters.key_id?.toString() ?? ''} />
        <Suggest id="choices-keys" values={choices?.keys.values} />
      </Field>
      <Field label="Model" name="model">
        <input name="model" list="choices-models" defaultValue={filters.model ?? ''} />
        <Suggest id="choices-models" values={choices?.models.values} />
      </Field>
      <Field label="Group" name="group">
        <input name="group" list="choices-groups" defaultValue={filters.group ?? ''} />
        <Suggest id="choices-groups" values={choices?.groups.values} />
      </Field>
      <Field label="Status" name="status_code">
        <input name="status_code" inputMode="numeric" defaultValue={filters.status_code?.toString() ?? ''} />
      </Field>
      <Field label="From (local time)" name="since">
        <input name="since" type="datetime-local" defaultValue={toLocalInput(filters.since)} />
      </Field>
      <Field label="To (local time)" name="until">
        <input name="until" type="datetime-local" defaultValue={toLocalInput(filters.until)} />
      </Field>
      <label class="check">
        <input name="error_only" type="checkbox" defaultChecked={!!filters.error_only} /> Errors only
      </label>
      <button type="submit" class="primary">
        Apply
      </button>
    </form>
  );
}

const pretty = (text: string | undefined): string => {
  if (!text) return '(empty)';
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
};

function Detail({ row, onClose }: { row: LogRow | undefined; onClose: () => void }) {
  return (
    <aside class="detail" aria-label="log detail">
      <div class="detail-head">
        <h2>Log {row?.id ?? ''}</h2>
        <button type="button" onClick={onClose} aria-label="close the detail">
          ✕
        </button>
      </div>
      {!row ? (
        <p class="muted">This record is not on the current page.</p>
      ) : (
        <>
          <dl class="facts">
            <dt>Time</dt>
            <dd>
              <Time t={row.createdAt} />
            </dd>
            <dt>Master / key</dt>
            <dd>
              {row.master_id} / {row.key_id}
            </dd>
            <dt>Model / group</dt>
            <dd>
              {row.model} / {row.group}
            </dd>
            <dt>Status</dt>
            <dd>{row.status_code}</dd>
            <dt>Latency</dt>
            <dd>{ms(row.latency_ms)}</dd>
            <dt>Tokens</dt>
            <dd>
              <Num n={row.tokens_in} /> in, <Num n={row.tokens_out} /> out
            </dd>
            <dt>Cost</dt>
            <dd class="log-cost">
              <Cost row={row} />
            </dd>
            <dt>Client IP</dt>
            <dd>{row.client_ip || '–'}</dd>
            {row.error_message && (
              <>
                <dt>Error</dt>
                <dd class="bad">{row.error_message}</dd>
              </>
            )}
            {row.audit_reason && (
              <>
                <dt>Audit reason</dt>
                <dd>{row.audit_reason}</dd>
              </>
            )}
          </dl>
          <h3>Request body</h3>
          <pre class="body request-body">{pretty(row.request_body)}</pre>
          <h3>Response body</h3>
          <pre class="body response-body">{pretty(row.response_body)}</pre>
        </>
      )}
    </aside>
  );
}

/** A record's cost; one whose model had no price says so (its cost counts as 0). */
const Cost = ({ row }: { row: { cost?: number; unpriced?: number } }) =>
  row.unpriced ? (
    <span class="muted" title="the model had no price when the record was stored: counted as 0">
      no price
    </span>
  ) : (
    <Money n={row.cost} />
  );

function DeleteLogs({ filters, onClose, onDone }: { filters: Filters; onClose: () => void; onDone: () => void }) {
  const [before, setBefore] = useState(toLocalInput(filters.until ?? Math.floor(Date.now() / 1000)));
  const beforeSec = fromLocalInput(before);
  const narrowed = [
    filters.master_id !== undefined && `master ${filters.master_id}`,
    filters.key_id !== undefined && `key ${filters.key_id}`,
    filters.model && `model ${filters.model}`,
    filters.status_code !== undefined && `status ${filters.status_code}`,
  ].filter(Boolean);
  return (
    <Confirm
      title="Delete log records"
      danger
      confirmLabel="Delete"
      onCancel={onClose}
      onDone={onDone}
      action={() =>
        api.delete('/admin/logs', {
          query: {
            before: new Date((beforeSec ?? 0) * 1000).toISOString(),
            master_id: filters.master_id,
            key_id: filters.key_id,
            model: filters.model,
            status_code: filters.status_code,
          },
        })
      }
    >
      <Field label="Created before (local time)" name="before">
        <input type="datetime-local" value={before} onInput={(e) => setBefore(e.currentTarget.value)} />
      </Field>
      <p class="what">
        Every log record created before <strong>{beforeSec ? localTime(beforeSec) : '?'}</strong>
        {narrowed.length ? <> of {narrowed.join(', ')}</> : <> (all masters, keys and models)</>} will be deleted, and the rollups follow. The group, error-only and start
        filters do not narrow a delete.
      </p>
    </Confirm>
  );
}
