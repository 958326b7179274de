/** A tenant's own child keys (/v1/tokens): list, issue (secret shown once), edit limits, suspend, revoke. */
import { api } from '../session';
import { setQuery, useLocation } from '../router';
import { PagePager } from '../ui/components';
import { useApi } from '../ui/hooks';
import { ChildKeys, type KeyCalls } from './child-keys';

const calls: KeyCalls = {
  issue: (body) => api.post('/v1/tokens', { body }),
  update: (id, body) => api.put('/v1/tokens/{id}', { path: { id }, body }),
  revoke: (id) => api.post('/v1/tokens/{id}/revoke', { path: { id } }),
};

export function MyKeys() {
  const { query } = useLocation();
  const page = Math.max(1, Number(query.get('page')) || 1);
  const limit = 50;
  const list = useApi((signal) => api.get('/v1/tokens', { query: { page, limit }, signal }), [page]);
  return (
    <section>
      <h1>Keys</h1>
      <ChildKeys
        list={list}
        calls={calls}
        onChange={list.reload}
        footer={(total) => <PagePager total={total} page={page} limit={limit} onPage={(p) => setQuery({ page: p > 1 ? p : undefined }, { push: true })} />}
      />
    </section>
  );
}
