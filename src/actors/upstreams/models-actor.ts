/** The model capability registry: admin CRUD and the remote registry (refresh, status, check, rollback). */
import { defineActor, implement } from '../runtime/actor.js';
import { models } from './handles.js';
import { notFound } from '../../errors.js';
import { deleteModel, findModel, insertModel, listModels, listPrices, updateModel, type ModelRow } from '../../storage/postgres/models.js';
import type { BaseContext } from '../runtime/actor.js';
import { mapDbErrors } from './db-errors.js';
import { routedChange } from './sync.js';
import { checkRegistry, refreshRegistry, registryStatus, rollbackRegistry } from './registry.js';


/**
 * After a committed model change: this node's ingestion path prices with the new
 * prices before the answer (other nodes hear the routing announcement, or poll).
 */
async function pricesInForce<T>(ctx: BaseContext, change: Promise<T>): Promise<T> {
  const result = await change;
  await ctx.ask('logs', 'setPrices', await listPrices(ctx.db));
  return result;
}

export default defineActor({
  name: 'models',
  placement: 'worker',
  handlers: {
    /** Every live model's prices as decimal text (the logs actor's price map). */
    prices: (_: unknown, ctx) => listPrices(ctx.db),

    ...implement(models, {
      list: (_, ctx) => listModels(ctx.db),

      get: async ({ params }, ctx) => {
        const m = await findModel(ctx.db, params.id);
        if (!m) throw notFound('model', { id: params.id });
        return m;
      },

      create: ({ body }, ctx) =>
        pricesInForce(ctx, mapDbErrors(
          () =>
            routedChange(ctx, async (tx) => {
              const m = await insertModel(tx, { ...body, source: 'admin' });
              return { result: m, affected: { models: [m.name] } };
            }),
          'model',
          'name',
        )),

      update: ({ params, body }, ctx) =>
        pricesInForce(ctx, mapDbErrors(
          () =>
            routedChange(ctx, async (tx) => {
              const before = await findModel(tx, params.id);
              if (!before) throw notFound('model', { id: params.id });
              const m = (await updateModel(tx, params.id, { ...body, source: 'admin' }))!;
              return { result: m, affected: { models: [before.name, m.name] } };
            }),
          'model',
          'name',
        )),

      delete: ({ params }, ctx) =>
        pricesInForce(ctx, routedChange(ctx, async (tx) => {
          const m = await deleteModel(tx, params.id);
          if (!m) throw notFound('model', { id: params.id });
          return { result: { id: m.id, deleted: true }, affected: { models: [m.name] } };
        })),

      registryRefresh: ({ body }, ctx) => pricesInForce(ctx, refreshRegistry(ctx, body.ref)),
      registryStatus: (_, ctx) => registryStatus(ctx),
      registryCheck: (_, ctx) => checkRegistry(ctx),
      registryRollback: (_, ctx) => pricesInForce(ctx, rollbackRegistry(ctx)),
    }),
  },
});
