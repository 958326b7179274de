/**
 * Turning a request body into a validated value, the same way wherever it
 * runs: the HTTP thread for ordinary routes, a worker actor for raw routes
 * whose bodies are too large to parse on the HTTP thread (the stats flush).
 */
import type { ValidateFunction } from 'ajv';
import { badRequest } from '../errors.js';
import { compileBody, fieldErrors, type JSONSchema } from './validate.js';
import type { Handle, InputSchemas, Validated } from './handle.js';

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

/** One validator per declared body, compiled on first use in each thread. */
const declared = new WeakMap<object, ValidateFunction>();

/**
 * The body of a `bytes` handle, parsed and validated where it runs (a worker
 * thread) with the validator compiled from the handle's own body schema: the
 * same rules and the same 400s as a body the HTTP thread validates.
 */
export function parseDeclared<S extends InputSchemas>(handle: Handle<S>, bytes: Uint8Array | null): Validated<S['body']> {
  const schema = handle.input.body;
  if (!schema) throw new Error(`${handle.actor}.${handle.message} declares no body`);
  let validate = declared.get(schema);
  if (!validate) declared.set(schema, (validate = compileBody(schema as JSONSchema)));
  return validated(validate, parseJson(bytes), 'body');
}
