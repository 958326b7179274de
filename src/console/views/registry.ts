/** Which views each role has, and the address of each. */
import type { FunctionComponent } from 'preact';
import { Overview } from './overview';
import { Logs } from './logs';
import { Tenants } from './tenants';
import { Tenant } from './tenant';
import { Upstreams } from './upstreams';
import { Models } from './models';
import { Routing } from './routing';
import { Alerts } from './alerts';
import { Features } from './features';
import { Operations } from './operations';
import { MyUsage } from './my-usage';
import { MyKeys } from './my-keys';

export interface ViewDef {
  id: string;
  title: string;
  path: string;
  pattern: RegExp;
  nav: boolean;
  component: FunctionComponent<{ params: Record<string, string> }>;
}

export const adminViews: ViewDef[] = [
  { id: 'overview', title: 'Overview', path: '', pattern: /^(\/overview)?$/, nav: true, component: Overview },
  { id: 'logs', title: 'Logs', path: '/logs', pattern: /^\/logs$/, nav: true, component: Logs },
  { id: 'tenants', title: 'Tenants', path: '/tenants', pattern: /^\/tenants$/, nav: true, component: Tenants },
  { id: 'tenant', title: 'Tenant', path: '/tenants', pattern: /^\/tenants\/(?<id>\d+)$/, nav: false, component: Tenant },
  { id: 'upstreams', title: 'Upstreams', path: '/upstreams', pattern: /^\/upstreams$/, nav: true, component: Upstreams },
  { id: 'models', title: 'Models', path: '/models', pattern: /^\/models$/, nav: true, component: Models },
  { id: 'routing', title: 'Routing', path: '/routing', pattern: /^\/routing$/, nav: true, component: Routing },
  { id: 'alerts', title: 'Alerts', path: '/alerts', pattern: /^\/alerts$/, nav: true, component: Alerts },
  { id: 'features', title: 'Features', path: '/features', pattern: /^\/features$/, nav: true, component: Features },
  { id: 'operations', title: 'Operations', path: '/operations', pattern: /^\/operations$/, nav: true, component: Operations },
];

export const tenantViews: ViewDef[] = [
  { id: 'usage', title: 'Usage', path: '', pattern: /^(\/usage)?$/, nav: true, component: MyUsage },
  { id: 'keys', title: 'Keys', path: '/keys', pattern: /^\/keys$/, nav: true, component: MyKeys },
  { id: 'logs', title: 'Logs', path: '/logs', pattern: /^\/logs$/, nav: true, component: Logs },
];
