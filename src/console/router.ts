/**
 * URL routes under /console/: every view and its filters live in the address,
 * so links can be shared and back/forward work (history API, no hash).
 */
import { Store, useStore } from './store';

export const base = '/console';

export interface Location {
  /** Path below /console, without a trailing slash: '' for the home view, '/logs', '/tenants/7'. */
  path: string;
  query: URLSearchParams;
  href: string;
}

const read = (): Location => {
  const raw = window.location.pathname.startsWith(base) ? window.location.pathname.slice(base.length) : '';
  return {
    path: raw.replace(/\/+$/, ''),
    query: new URLSearchParams(window.location.search),
    href: window.location.pathname + window.location.search,
  };
};

export const location = new Store<Location>(read());
window.addEventListener('popstate', () => location.set(read()));

/** Goes to a console path ('/logs?model=x'); replace keeps the history entry (filters typed in place). */
export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  const url = to.startsWith(base) ? to : base + to;
  if (url === window.location.pathname + window.location.search) return;
  if (opts.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  location.set(read());
  if (!opts.replace) window.scrollTo(0, 0);
}

export const useLocation = (): Location => useStore(location);

/** A console path with its query; empty values are left out. */
export function href(path: string, query: Record<string, string | number | boolean | undefined | null> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '' && v !== false) q.set(k, String(v));
  const qs = q.toString();
  return base + path + (qs ? `?${qs}` : '');
}

/** Sets some query parameters of the current view (replacing the history entry for filter edits). */
export function setQuery(patch: Record<string, string | number | boolean | undefined | null>, opts: { push?: boolean } = {}): void {
  const { path, query } = location.get();
  const next: Record<string, string> = Object.fromEntries(query);
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined || v === null || v === '' || v === false) delete next[k];
    else next[k] = String(v);
  }
  navigate(href(path, next), { replace: !opts.push });
}
