/**
 * Validation of plain data against a JSON Schema, the same wherever it runs:
 * the HTTP layer for params, queries and bodies, the domains for what they
 * parse themselves (log records, the stats flush, the model registry). ajv
 * validators: bodies strict, query and path parameters coerced from strings,
 * every one with the value rules of value-rules.ts.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
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
