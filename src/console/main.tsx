/** Entry of the operator console: the shell (navigation by role, sign-in, sign-out) and the view for the address. */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import './styles.css';
import { restore, session, signOut } from './session';
import { useStore } from './store';
import { navigate, useLocation, href } from './router';
import { Link, Loading } from './ui/components';
import { SignIn } from './views/signin';
import { adminViews, tenantViews, type ViewDef } from './views/registry';

function Nav({ views, current }: { views: ViewDef[]; current: ViewDef | undefined }) {
  return (
    <nav class="sidebar" aria-label="views">
      <div class="brand">Gateway console</div>
      <ul>
        {views.filter((v) => v.nav).map((v) => (
          <li key={v.id}>
            <Link to={href(v.path)} current={current?.id === v.id}>
              {v.title}
            </Link>
          </li>
        ))}
      </ul>
    </nav>
  );
}

function App() {
  const s = useStore(session);
  const loc = useLocation();
  const [restoring, setRestoring] = useState(!!s.token && !s.identity);
  useEffect(() => {
    if (restoring) void restore().finally(() => setRestoring(false));
  }, []);

  if (restoring) return <Loading what="your session" />;

  if (!s.identity) {
    if (loc.path !== '/signin') {
      // Remember the address asked for; the sign-in page opens it afterwards.
      const next = loc.path === '' ? undefined : loc.href;
      return <Redirect to={href('/signin', { next })} />;
    }
    return <SignIn />;
  }
  if (loc.path === '/signin') {
    const next = loc.query.get('next');
    return <Redirect to={next && next.startsWith('/console/') && !next.startsWith('/console/signin') ? next : href('')} />;
  }

  const views = s.identity.type === 'admin' ? adminViews : tenantViews;
  const match = matchView(views, loc.path);
  const who = s.identity.type === 'admin' ? 'admin' : `master ${s.identity.name ?? ''} (#${s.identity.id})`;
  return (
    <div class="shell">
      <Nav views={views} current={match?.view} />
      <div class="main">
        <header class="topbar">
          <span class="who" data-role={s.identity.type}>
            Signed in as <strong>{who}</strong>
          </span>
          <button type="button" onClick={() => signOut('You signed out.')}>
            Sign out
          </button>
        </header>
        <main id="content" data-view={match?.view.id ?? 'not-found'}>
          {match ? (
            <match.view.component params={match.params} />
          ) : (
            <section>
              <h1>Not found</h1>
              <p>
                There is no view at <code>{loc.path}</code>. <Link to={href('')}>Back to the start</Link>
              </p>
            </section>
          )}
        </main>
      </div>
    </div>
  );
}

function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, { replace: true }), [to]);
  return null;
}

function matchView(views: ViewDef[], path: string): { view: ViewDef; params: Record<string, string> } | null {
  for (const view of views) {
    const m = view.pattern.exec(path);
    if (m) return { view, params: m.groups ?? {} };
  }
  return null;
}

render(<App />, document.getElementById('app')!);
