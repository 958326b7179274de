/**
 * The context of main-thread actors: besides what every actor has, the owners
 * of native or process-local resources (the shared store, ClickHouse, the
 * embedded database) live here.
 */
import type { BaseContext } from './runtime/actor.js';
import type { SharedStore } from '../storage/redis/store.js';
import type { ClickHouse } from '../storage/clickhouse/client.js';
import type { Database } from '../storage/postgres/database.js';

export interface MainContext extends BaseContext {
  store: SharedStore;
  clickhouse: ClickHouse;
  database: Database;
  startedAt: number;
}
