/** GET /auth/whoami: who the bearer is (admin token, master key or child key). */
import { forbidden } from '../../errors.js';
import { handlerRoute, type Route } from '../route.js';
import type { KeyPrincipal, MasterPrincipal } from '../tenant-auth.js';
import { identityView } from './tenancy-schemas.js';

export const whoamiRoutes: Route[] = [
  handlerRoute({
    method: 'GET',
    path: '/auth/whoami',
    role: 'identify',
    summary: 'Identity of the bearer: admin, master or child key (the key is checked against the store metadata first)',
    tags: ['public'],
    success: { status: 200, schema: identityView },
    handler: ({ principal }) => {
      switch (principal.type) {
        case 'master': {
          const p = principal as MasterPrincipal;
          if (p.status !== 'active') throw forbidden('the master is not active', { status: p.status });
          return { type: 'master', role: 'master', ...p.view };
        }
        case 'key':
          return { type: 'key', role: 'key', ...(principal as KeyPrincipal).identity };
        default:
          return { type: 'admin', role: 'admin' };
      }
    },
  }),
];
