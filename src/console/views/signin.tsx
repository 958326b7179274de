/** Sign-in: the admin token or a master key, checked with /auth/whoami and kept in sessionStorage only. */
import { useState } from 'preact/hooks';
import { session, signIn } from '../session';
import { useStore } from '../store';
import { ErrorBox } from '../ui/components';
import type { ApiError } from '../api/client';

export function SignIn() {
  const { reason } = useStore(session);
  const [token, setToken] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | undefined>();
  return (
    <main class="signin" data-view="signin">
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          setError(undefined);
          try {
            await signIn(token.trim());
          } catch (err) {
            setError(err as ApiError);
          } finally {
            setBusy(false);
          }
        }}
      >
        <h1>Gateway console</h1>
        {reason && (
          <p class="reason" role="status">
            {reason}
          </p>
        )}
        <label class="field">
          <span class="label">Admin token or master key</span>
          <input
            type="password"
            name="credential"
            autoComplete="off"
            autoFocus
            required
            value={token}
            onInput={(e) => setToken(e.currentTarget.value)}
          />
          <span class="hint">Kept in this tab only (sessionStorage) and sent as the Bearer header.</span>
        </label>
        {error && <ErrorBox error={error} />}
        <button type="submit" class="primary" disabled={busy || !token.trim()}>
          Sign in
        </button>
      </form>
    </main>
  );
}
