/**
 * The log pipeline's dead letters: rows ClickHouse refused, set apart with
 * their error. Replay inserts them again (rows refused again stay, with the
 * new error); delete discards them. Both are confirmed, saying how many
 * records they touch.
 */
import { useState } from 'preact/hooks';
import { api } from '../session';
import { Async, Confirm, Num, Table, Time } from '../ui/components';
import { useApi } from '../ui/hooks';
import type { Success } from '../api/client';

type Letter = Success<'/admin/logs/dead-letters', 'get'>['items'][number];

export function DeadLetters() {
  const list = useApi((signal) => api.get('/admin/logs/dead-letters', { signal }), []);
  const [dialog, setDialog] = useState<{ replay: Letter } | { remove: Letter } | null>(null);
  const [outcome, setOutcome] = useState('');
  const close = () => setDialog(null);
  return (
    <>
      {outcome && (
        <p class="notice" role="status">
          {outcome}
        </p>
      )}
      <Async state={list} empty={(l) => (l.total === 0 ? 'No dead letters: every record the pipeline accepted was stored or is pending.' : false)}>
        {(l) => (
          <>
            <p class="muted">
              <Num n={l.total} /> dead letters holding <Num n={l.records} /> records, not in any chart or list until replayed.
            </p>
            <Table
              label="dead letters"
              rows={l.items}
              rowKey={(d) => d.id}
              columns={[
                { title: 'ID', cell: (d) => <code>{d.id}</code> },
                { title: 'Refused at', cell: (d) => <Time t={d.at} /> },
                { title: 'Table', cell: (d) => d.table },
                { title: 'Records', cell: (d) => <Num n={d.records} />, class: 'right' },
                { title: 'Error', cell: (d) => <span class="ellipsis bad" title={d.message}>{d.code !== null ? `${d.code}: ` : ''}{d.message}</span> },
                { title: 'First rows', cell: (d) => <pre class="body dead-sample">{d.sample.join('\n')}</pre> },
                {
                  title: 'Actions',
                  cell: (d) => (
                    <span class="row-actions">
                      <button type="button" onClick={() => setDialog({ replay: d })}>Replay</button>
                      <button type="button" class="danger" onClick={() => setDialog({ remove: d })}>Delete</button>
                    </span>
                  ),
                },
              ]}
            />
          </>
        )}
      </Async>
      {dialog && 'replay' in dialog && (
        <Confirm
          title="Replay dead letter"
          confirmLabel="Replay"
          onCancel={close}
          onDone={(r) => {
            const x = r as Success<'/admin/logs/dead-letters/{id}/replay', 'post'>;
            setOutcome(`Dead letter ${x.id}: ${x.stored} records stored, ${x.refused} refused again${x.remains ? ` (kept: ${x.error?.message ?? 'refused'})` : ''}.`);
            close();
            list.reload();
          }}
          action={() => api.post('/admin/logs/dead-letters/{id}/replay', { path: { id: dialog.replay.id } })}
        >
          <p>
            The <Num n={dialog.replay.records} /> records of dead letter <code>{dialog.replay.id}</code> are inserted again. Records refused again stay here with
            the new error.
          </p>
        </Confirm>
      )}
      {dialog && 'remove' in dialog && (
        <Confirm
          title="Delete dead letter"
          confirmLabel="Delete"
          danger
          onCancel={close}
          onDone={() => (setOutcome(`Dead letter ${dialog.remove.id} deleted.`), close(), list.reload())}
          action={() => api.delete('/admin/logs/dead-letters/{id}', { path: { id: dialog.remove.id } })}
        >
          <p>
            The <Num n={dialog.remove.records} /> records of dead letter <code>{dialog.remove.id}</code> are discarded for good: they will never be stored or
            counted.
          </p>
        </Confirm>
      )}
    </>
  );
}
