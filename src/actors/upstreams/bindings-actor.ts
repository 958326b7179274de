/**
 * Namespaces and bindings. A binding maps namespace + "." + public_model (the
 * bindingKey) to an upstream model of a provider group; several bindings may
 * share a bindingKey and the data plane picks among them by weight.
 */
import type { CommonQueryMethods } from 'slonik';
import { defineActor, implement, type BaseContext } from '../runtime/actor.js';
import { bindings } from './handles.js';
import { badRequest, notFound } from '../../errors.js';
import { clampLimit } from '../../contract/page.js';
import {
  findBinding,
  findNamespace,
  insertBinding,
  insertNamespace,
  listBindings,
  listNamespaces,
  updateBindings,
  updateNamespace,
  deleteBinding,
  type BindingRow,
} from '../../storage/postgres/bindings.js';
import { findGroup } from '../../storage/postgres/upstreams.js';
import { mapDbErrors } from './db-errors.js';
import { resolveSelector } from './selector.js';
import { routedChange } from './sync.js';

type BindingInput = Partial<Pick<BindingRow, 'namespace' | 'public_model' | 'group_id' | 'selector_type' | 'selector_value' | 'weight' | 'status'>>;

/** 400 naming `prefix + field` unless the namespace and group exist and the selector resolves. */
async function checkTarget(db: CommonQueryMethods, b: BindingInput, prefix: string): Promise<void> {
  const errors: Record<string, string> = {};
  if (!(await findNamespace(db, b.namespace!))) errors[`${prefix}namespace`] = 'unknown namespace';
  const group = await findGroup(db, b.group_id!);
  if (!group) errors[`${prefix}group_id`] = 'unknown provider group';
  else if (resolveSelector(b.selector_type!, b.selector_value!, group.models) === null) {
    errors[`${prefix}selector_value`] = `resolves to none of the models of provider group ${group.id}`;
  }
  if (Object.keys(errors).length) throw badRequest('binding target is invalid', errors);
}

const withSelectorDefault = (b: BindingInput): BindingInput => ({ selector_type: 'exact', ...b, selector_value: b.selector_value ?? b.public_model });

function createBindings(ctx: BaseContext, inputs: BindingInput[], prefix: (i: number) => string): Promise<BindingRow[]> {
  return mapDbErrors(
    () =>
      routedChange(ctx, async (tx) => {
        const rows: BindingRow[] = [];
        for (const [i, input] of inputs.entries()) {
          const b = withSelectorDefault(input);
          await checkTarget(tx, b, prefix(i));
          rows.push(await insertBinding(tx, b));
        }
        return { result: rows, affected: { bindingKeys: rows.map((r) => r.binding_key) } };
      }),
    'binding to this group and upstream model',
    'selector_value',
  );
}

export default defineActor({
  name: 'bindings',
  placement: 'worker',
  handlers: implement(bindings, {
    createNamespace: ({ body }, ctx) =>
      mapDbErrors(() => insertNamespace(ctx.db, body), 'namespace', 'name'),

    listNamespaces: async ({ query }, ctx) => {
      const limit = clampLimit(query.limit);
      return { ...(await listNamespaces(ctx.db, { ...query, limit })), page: query.page, limit };
    },

    /** A status change re-writes every bindingKey of the namespace (its snapshots carry the status). */
    updateNamespace: ({ params, body }, ctx) =>
      routedChange(ctx, async (tx) => {
        const ns = await updateNamespace(tx, params.name, body);
        if (!ns) throw notFound('namespace', { name: params.name });
        return { result: ns, affected: { namespaces: [ns.name] } };
      }),

    createBinding: async ({ body }, ctx) => (await createBindings(ctx, [body], () => ''))[0],

    batchCreateBindings: async ({ body }, ctx) => {
      const rows = await createBindings(ctx, body.items, (i) => `items.${i}.`);
      return { items: rows, total: rows.length };
    },

    listBindings: async ({ query }, ctx) => {
      const limit = clampLimit(query.limit);
      return { ...(await listBindings(ctx.db, { ...query, limit })), page: query.page, limit };
    },

    getBinding: async ({ params }, ctx) => {
      const b = await findBinding(ctx.db, params.id);
      if (!b) throw notFound('binding', { id: params.id });
      return b;
    },

    updateBinding: ({ params, body }, ctx) =>
      mapDbErrors(
        () =>
          routedChange(ctx, async (tx) => {
            const current = await findBinding(tx, params.id);
            if (!current) throw notFound('binding', { id: params.id });
            const retargeted = ['namespace', 'group_id', 'selector_type', 'selector_value'].some((f) => f in body);
            if (retargeted) await checkTarget(tx, { ...current, ...body }, '');
            const [row] = await updateBindings(tx, [params.id], body);
            return { result: row!, affected: { bindingKeys: [current.binding_key, row!.binding_key] } };
          }),
        'binding to this group and upstream model',
        'selector_value',
      ),

    batchBindingStatus: async ({ body }, ctx) => {
      const rows = await routedChange(ctx, async (tx) => {
        const updated = await updateBindings(tx, body.ids, { status: body.status });
        return { result: updated, affected: { bindingKeys: updated.map((r) => r.binding_key) } };
      });
      const found = new Set(rows.map((r) => r.id));
      return { updated: rows.length, ids: rows.map((r) => r.id), not_found: body.ids.filter((id) => !found.has(id)) };
    },

    deleteBinding: ({ params }, ctx) =>
      routedChange(ctx, async (tx) => {
        const b = await deleteBinding(tx, params.id);
        if (!b) throw notFound('binding', { id: params.id });
        return { result: { id: b.id, deleted: true }, affected: { bindingKeys: [b.binding_key] } };
      }),
  }),
});
