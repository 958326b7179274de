/**
 * JSON Schema plumbing: ajv validators (bodies strict, query and path
 * parameters coerced from strings), fast-json-stringify serializers, and the
 * shared schema fragments routes are built from.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import fastJson from 'fast-json-stringify';
import { addValueRules, harden, type HardenOptions } from './value-rules.js';

export type JSONSchema = Record<string, unknown>;

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

// strictNumbers: Infinity and NaN are not numbers (`1e400` parses to Infinity, `?id=Infinity` coerces to it).
const options = { allErrors: true, useDefaults: true, strict: false, strictNumbers: true } as const;
const bodyAjv = addValueRules(addFormats(new Ajv(options)));
const paramAjv = addValueRules(addFormats(new Ajv({ ...options, coerceTypes: 'array' })));

/** Every validator is compiled with the value rules of value-rules.ts added to the declared schema. */
export function compileBody(schema: JSONSchema, opts?: HardenOptions): ValidateFunction {
  return bodyAjv.compile(harden(schema, opts));
}

export function compileParams(schema: JSONSchema): ValidateFunction {
  return paramAjv.compile(harden(schema));
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
    } else if (e.keyword === 'format' && (e.params as { format: string }).format === 'date-time') {
      message = 'must be an RFC 3339 date-time: a real date, seconds 00-59 (no leap second), UTC year 0001-9999';
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
