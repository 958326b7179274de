/**
 * Who is signed in: the credential lives in sessionStorage only (gone with the
 * tab, never a cookie), and `/auth/whoami` decides which views the role sees.
 */
import { ApiClient, ApiError, type Success } from './api/client';
import { Store } from './store';

const storageKey = 'console.credential';

export type Identity = Success<'/auth/whoami', 'get'>;

export interface SessionState {
  token: string | null;
  identity: Identity | null;
  /** Why the sign-in page is shown (expired credential, child key...). */
  reason: string;
}

export const session = new Store<SessionState>({ token: sessionStorage.getItem(storageKey), identity: null, reason: '' });

export const api = new ApiClient(() => session.get().token);

api.onUnauthorized = (reason) => signOut(`Signed out: ${reason}`);

export function signOut(reason = ''): void {
  sessionStorage.removeItem(storageKey);
  session.set({ token: null, identity: null, reason });
}

/** Checks a credential with whoami; keeps it only for the admin token or an active master key. */
export async function signIn(token: string): Promise<void> {
  const probe = new ApiClient(() => token);
  let identity: Identity;
  try {
    identity = await probe.get('/auth/whoami');
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw new ApiError(0, 'network', String(err), {}, '');
  }
  if (identity.type === 'key') {
    throw new ApiError(403, 'forbidden', 'child keys cannot use the console: sign in with the admin token or a master key', {}, '');
  }
  sessionStorage.setItem(storageKey, token);
  session.set({ token, identity, reason: '' });
}

/** On load with a stored credential: who is it now (it may have been revoked). */
export async function restore(): Promise<void> {
  const { token } = session.get();
  if (!token) return;
  try {
    await signIn(token);
  } catch (err) {
    signOut(err instanceof ApiError ? `Signed out: ${err.message}` : 'Signed out');
  }
}
