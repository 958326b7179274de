/**
 * The actors hosted on worker threads, by name, and how each thread opens its
 * Postgres pool (the runtime knows no store). Worker threads import this
 * module and load each actor; the main thread only reads the names.
 */
import type { DatabasePool } from 'slonik';
import type { ActorDefinition } from './runtime/actor.js';
import { connectPool } from '../storage/postgres/pool.js';

type Loader = () => Promise<{ default: ActorDefinition<any> }>;

const registry: Record<string, Loader> = {
  features: () => import('./features/actor.js'),
  'config-sync': () => import('./sync/actor.js'),
  upstreams: () => import('./upstreams/actor.js'),
  bindings: () => import('./upstreams/bindings-actor.js'),
  models: () => import('./upstreams/models-actor.js'),
  masters: () => import('./tenancy/masters.js'),
  'child-keys': () => import('./tenancy/keys.js'),
  'tenancy-usage': () => import('./tenancy/usage.js'),
  'analytics-counts': () => import('./analytics/counts.js'),
  alerts: () => import('./alerts/actor.js'),
  'alert-config': () => import('./alerts/config-actor.js'),
  budgets: () => import('./spend/budgets.js'),
};

export default registry;

/** Each worker thread's own pool: a few connections, so one thread's handlers overlap their queries. */
export const connectDatabase = (url: string): Promise<DatabasePool> => connectPool(url, { maxSize: 4 });
