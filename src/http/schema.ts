/**
 * JSON Schema plumbing of the HTTP layer: fast-json-stringify serializers and
 * the shared schema fragments routes are built from. Validators are compiled by
 * src/contract/validate.ts, which the domains use too.
 */
import fastJson from 'fast-json-stringify';
import type { JSONSchema } from '../contract/validate.js';

export function compileSerializer(schema: JSONSchema): (data: unknown) => string {
  return fastJson(schema as unknown as Parameters<typeof fastJson>[0]) as (data: unknown) => string;
}

// Shared fragments.
export const errorEnvelope: JSONSchema = {
  type: 'object',
  properties: {
    code: { type: 'string' },
    message: { type: 'string' },
    data: { type: 'object', additionalProperties: true },
    request_id: { type: 'string' },
  },
  required: ['code', 'message', 'data', 'request_id'],
};

export const deletedAt: JSONSchema = {
  type: 'object',
  properties: { time: { type: ['string', 'null'] }, valid: { type: 'boolean' } },
  required: ['time', 'valid'],
};

export const timestamps: Record<string, JSONSchema> = {
  createdAt: { type: 'string' },
  updatedAt: { type: 'string' },
  deletedAt,
};
