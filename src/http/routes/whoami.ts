/** GET /auth/whoami: who the bearer is (admin token, master key or child key). */
import { forbidden, unauthorized } from '../../errors.js';
import type { MasterLookup } from '../../actors/tenancy/identity-cache.js';
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
    handler: ({ principal }, app) => {
      switch (principal.type) {
        case 'master': {
          // Read afresh: the view holds key counts and budget use, which change without an identity change.
          return app.ask<MasterLookup | null>('masters', 'authenticate', { tokenHash: (principal as MasterPrincipal).tokenHash }).then((found) => {
            if (!found) throw unauthorized();
            if (found.identity.status !== 'active') throw forbidden('the master is not active', { status: found.identity.status });
            return { type: 'master', role: 'master', ...found.view };
          });
        }
        case 'key':
          return { type: 'key', role: 'key', ...(principal as KeyPrincipal).identity };
        default:
          return { type: 'admin', role: 'admin' };
      }
    },
  }),
];
