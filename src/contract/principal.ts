/**
 * Who is calling, as every layer sees it: the HTTP layer resolves it from the
 * credentials, the domains decide with it (a tenant sees only its own rows).
 * Plain data, so it crosses to worker threads unchanged.
 */
export type Principal =
  | { type: 'anonymous' }
  | { type: 'admin' }
  | { type: 'internal' }
  | { type: 'master'; id: number; name: string; group: string; epoch: number }
  | { type: 'key'; id: number; masterId: number; tokenHash: string };
