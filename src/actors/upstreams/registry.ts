/**
 * The remote model registry (SVC_MODEL_REGISTRY_URL): a refresh fetches
 * `GET <url>?ref=<ref>` answering `{"version": string, "models": [ModelDTO]}`,
 * writes the entries into the capability registry (source `registry`) and
 * keeps the payload so that rollback can re-apply the previous refresh.
 */
import type { CommonQueryMethods } from 'slonik';
import type { BaseContext } from '../runtime/actor.js';
import { AppError, conflict } from '../../errors.js';
import { compileBody, fieldErrors } from '../../contract/validate.js';
import { countRefreshes, dropRegistryModelsExcept, listModels, markRolledBack, recentRefreshes, recordRefresh, upsertRegistryModels, type RefreshRow } from '../../storage/postgres/models.js';
import { listGroups } from '../../storage/postgres/upstreams.js';
import { modelDto } from './handles.js';
import { routedChange } from './sync.js';

const validPayload = compileBody({
  type: 'object',
  required: ['models'],
  properties: { version: { type: 'string', maxLength: 200 }, models: { type: 'array', maxItems: 10_000, items: modelDto } },
});

const badGateway = (message: string, data: Record<string, unknown> = {}) => new AppError('unavailable', message, data, undefined, 502);

async function fetchRegistry(url: string, ref: string): Promise<{ version: string | null; models: Array<Record<string, unknown>> }> {
  const target = new URL(url);
  target.searchParams.set('ref', ref);
  let res: Response;
  try {
    res = await fetch(target, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(15_000) });
  } catch {
    throw new AppError('unavailable', 'model registry is unreachable');
  }
  if (!res.ok) throw badGateway(`model registry answered HTTP ${res.status}`, { status: res.status });
  const body = (await res.json().catch(() => undefined)) as { version?: string; models: Array<Record<string, unknown>> } | undefined;
  if (body === undefined || !validPayload(body)) throw badGateway('model registry answered an invalid payload', fieldErrors(validPayload.errors));
  const names = body.models.map((m) => m.name as string);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup) throw badGateway('model registry lists a model twice', { name: dup });
  return { version: body.version ?? null, models: body.models };
}

/** Makes the registry-sourced models exactly `entries`; returns every name touched. */
async function applyEntries(tx: CommonQueryMethods, entries: Array<Record<string, unknown>>): Promise<string[]> {
  const written = await upsertRegistryModels(tx, entries);
  const dropped = await dropRegistryModelsExcept(tx, written);
  return [...written, ...dropped];
}

const describe = (r: RefreshRow | undefined) =>
  r ? { id: r.id, ref: r.ref, version: r.version, source_url: r.source_url, applied_at: r.applied_at, models: r.models.length } : null;

export async function registryStatus(ctx: BaseContext) {
  const [current, previous] = await recentRefreshes(ctx.db, 2);
  const models = await listModels(ctx.db);
  return {
    configured: !!ctx.config.modelRegistryUrl,
    source_url: ctx.config.modelRegistryUrl ?? null,
    current: describe(current),
    previous: describe(previous),
    refreshes: await countRefreshes(ctx.db),
    registry_models: models.filter((m) => m.source === 'registry').length,
    total_models: models.length,
  };
}

export async function refreshRegistry(ctx: BaseContext, ref: string) {
  const url = ctx.config.modelRegistryUrl;
  if (!url) throw new AppError('unavailable', 'no model registry is configured (SVC_MODEL_REGISTRY_URL)');
  const fetched = await fetchRegistry(url, ref);
  await routedChange(ctx, async (tx) => {
    const touched = await applyEntries(tx, fetched.models);
    await recordRefresh(tx, { ref, source_url: url, version: fetched.version, models: fetched.models });
    return { result: null, affected: { models: touched } };
  });
  return registryStatus(ctx);
}

export async function rollbackRegistry(ctx: BaseContext) {
  await routedChange(ctx, async (tx) => {
    const [current, previous] = await recentRefreshes(tx, 2);
    if (!current || !previous) throw conflict('there is no previous registry refresh to roll back to');
    await markRolledBack(tx, current.id);
    return { result: null, affected: { models: await applyEntries(tx, previous.models) } };
  });
  return registryStatus(ctx);
}

/** What provider groups declare against what the registry knows. */
export async function checkRegistry(ctx: BaseContext) {
  const known = new Set((await listModels(ctx.db)).map((m) => m.name));
  const { items: groups } = await listGroups(ctx.db, { page: 1, limit: 1_000_000 });
  const served = new Set(groups.flatMap((g) => g.models));
  const report = groups.map((g) => ({ id: g.id, name: g.name, models: g.models.length, unknown_models: g.models.filter((m) => !known.has(m)) }));
  const unknown = [...new Set(report.flatMap((g) => g.unknown_models))].sort();
  return {
    ok: unknown.length === 0,
    groups: report,
    unknown_models: unknown,
    unserved_models: [...known].filter((m) => !served.has(m)).sort(),
  };
}
