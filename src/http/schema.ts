/**
 * JSON Schema plumbing: ajv validators (bodies strict, query and path
 * parameters coerced from strings), fast-json-stringify serializers, and the
 * shared schema fragments routes are built from.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import fastJson from 'fast-json-stringify';

export type JSONSchema = Record<string, unknown>;

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const bodyAjv = addFormats(new Ajv({ allErrors: true, useDefaults: true, strict: false }));
const paramAjv = addFormats(new Ajv({ allErrors: true, useDefaults: true, coerceTypes: 'array', strict: false }));

export function compileBody(schema: JSONSchema): ValidateFunction {
  return bodyAjv.compile(schema);
}

export function compileParams(schema: JSONSchema): ValidateFunction {
  return paramAjv.compile(schema);
}

export function compileSerializer(schema: JSONSchema): (data: unknown) => string {
  return fastJson(schema as unknown as Parameters<typeof fastJson>[0]) as (data: unknown) => string;
}

/** ajv errors as a map of field name to message: the `data` of a 400. */
export function fieldErrors(errors: ErrorObject[] | null | undefined, prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of errors ?? []) {
    let field = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'required') {
      field = [field, (e.params as { missingProperty: string }).missingProperty].filter(Boolean).join('.');
      message = 'is required';
    } else if (e.keyword === 'additionalProperties') {
      field = [field, (e.params as { additionalProperty: string }).additionalProperty].filter(Boolean).join('.');
      message = 'is not a known field';
    } else if (e.keyword === 'enum') {
      message = `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
    }
    const key = prefix + (field || '(body)');
    out[key] ??= message;
  }
  return out;
}

// Shared fragments.
export const idParam: JSONSchema = {
  type: 'object',
  properties: { id: { type: 'integer', minimum: 1 } },
  required: ['id'],
};

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

export const pageQuery = (extra: Record<string, JSONSchema> = {}): JSONSchema => ({
  type: 'object',
  properties: {
    page: { type: 'integer', minimum: 1, default: 1 },
    limit: { type: 'integer', minimum: 1, default: 50 },
    search: { type: 'string', maxLength: 200 },
    ...extra,
  },
});

export const pageOf = (item: JSONSchema): JSONSchema => ({
  type: 'object',
  properties: {
    items: { type: 'array', items: item },
    total: { type: 'integer' },
    page: { type: 'integer' },
    limit: { type: 'integer' },
  },
  required: ['items', 'total', 'page', 'limit'],
});

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

/** Clamps a list limit to the maximum of decisions.md (200). */
export const clampLimit = (limit: number | undefined, max = 200): number => Math.min(limit ?? 50, max);
