/** Provider group rules: types, the cloud-platform location default, deletion guarded by bindings. */
import type { CommonQueryMethods } from 'slonik';
import { implement } from '../runtime/actor.js';
import { upstreamGroups } from './handles.js';
import { conflict, notFound } from '../../errors.js';
import { deleteGroup, findGroup, insertGroup, listGroups, updateGroup, type GroupRow } from '../../storage/postgres/upstreams.js';
import { bindingsOfGroup, updateBindings } from '../../storage/postgres/bindings.js';
import { clampLimit } from '../../contract/page.js';
import { mapDbErrors } from './db-errors.js';
import { routedChange } from './sync.js';
import { cloudPlatformType } from './values.js';
import { keepMaskedHeaders, maskGroup } from './secrets.js';


type GroupInput = Partial<Omit<GroupRow, 'id' | 'createdAt' | 'updatedAt' | 'deletedAt'>>;

/** The cloud-platform kind gets `global` when no location is given. */
function withLocationDefault(values: GroupInput, current?: GroupRow): GroupInput {
  const type = values.type ?? current?.type;
  const location = values.cloud_location !== undefined ? values.cloud_location : current?.cloud_location;
  return type === cloudPlatformType && !location ? { ...values, cloud_location: 'global' } : values;
}

export async function requireGroup(db: CommonQueryMethods, id: number, lock = false): Promise<GroupRow> {
  const g = await findGroup(db, id, lock);
  if (!g) throw notFound('provider group', { id });
  return g;
}

export const groupHandlers = implement(upstreamGroups, {
  createGroup: ({ body }, ctx) =>
    mapDbErrors(
      () =>
        routedChange(ctx, async (tx) => {
          const g = await insertGroup(tx, withLocationDefault(body));
          return { result: maskGroup(g), affected: { groupIds: [g.id] } };
        }),
      'provider group',
      'name',
    ),

  listGroups: async ({ query }, ctx) => {
    const limit = clampLimit(query.limit);
    const { items, total } = await listGroups(ctx.db, { page: query.page, limit, search: query.search });
    return { items: items.map(maskGroup), total, page: query.page, limit };
  },

  /** The one place a group's credential headers are returned whole. */
  getGroup: async ({ params }, ctx) => requireGroup(ctx.db, params.id),

  updateGroup: ({ params, body }, ctx) =>
    mapDbErrors(
      () =>
        routedChange(ctx, async (tx) => {
          const current = await requireGroup(tx, params.id, true);
          const values = body.static_headers ? { ...body, static_headers: keepMaskedHeaders(body.static_headers, current.static_headers) } : body;
          const g = (await updateGroup(tx, params.id, withLocationDefault(values, current)))!;
          return { result: maskGroup(g), affected: { groupIds: [g.id] } };
        }),
      'provider group',
      'name',
    ),

  /** 409 listing the active bindings that target the group, unless `force`, which disables them. */
  deleteGroup: ({ params, query }, ctx) =>
    routedChange(ctx, async (tx) => {
      await requireGroup(tx, params.id, true);
      const active = (await bindingsOfGroup(tx, params.id)).filter((b) => b.status === 'active');
      if (active.length > 0 && !query.force) {
        throw conflict('provider group is referenced by bindings; retry with ?force=true to disable them', {
          bindings: active.map((b) => ({ id: b.id, binding_key: b.binding_key })),
        });
      }
      if (active.length > 0) await updateBindings(tx, active.map((b) => b.id), { status: 'disabled' });
      await deleteGroup(tx, params.id);
      return {
        result: { id: params.id, deleted: true, disabled_bindings: active.map((b) => b.id) },
        affected: { groupIds: [params.id], bindingKeys: active.map((b) => b.binding_key) },
      };
    }),
});
