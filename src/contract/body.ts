/**
 * Turning a request body into a validated value, the same way wherever it
 * runs: the HTTP thread for ordinary routes, a worker actor for raw routes
 * whose bodies are too large to parse on the HTTP thread (the stats flush).
 */
import type { ValidateFunction } from 'ajv';
import { badRequest } from '../errors.js';
import { fieldErrors } from './validate.js';

/** The body's JSON; undefined when it is empty. Takes a Buffer or the Uint8Array a worker receives. */
export function parseJson(body: Uint8Array | null): unknown {
  if (!body || body.length === 0) return undefined;
  try {
    return JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
  } catch (err) {
    throw badRequest('invalid JSON body', { body: (err as Error).message });
  }
}

export function validated<T>(validate: ValidateFunction, value: unknown, where: 'path' | 'query' | 'body'): T {
  if (where === 'body' && value === undefined) value = {};
  if (!validate(value)) {
    throw badRequest(`invalid ${where === 'path' ? 'path parameter' : where}`, fieldErrors(validate.errors));
  }
  return value as T;
}
