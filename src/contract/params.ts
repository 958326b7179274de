/** Path parameters shared by many routes, as literal schemas so that handlers read their types. */

export const idParam = {
  type: 'object',
  properties: { id: { type: 'integer', minimum: 1 } },
  required: ['id'],
} as const;
