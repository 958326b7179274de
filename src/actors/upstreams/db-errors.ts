/** Database failures caused by the input, as typed errors instead of 500s. */
import { ForeignKeyIntegrityConstraintViolationError, UniqueIntegrityConstraintViolationError } from 'slonik';
import { badRequest, conflict } from '../../errors.js';

/** Runs `work`, turning a unique violation into 409 and a foreign-key violation into 400. */
export async function mapDbErrors<T>(work: () => Promise<T>, what: string, field: string): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof UniqueIntegrityConstraintViolationError) throw conflict(`${what} already exists`, { [field]: 'already exists' });
    if (err instanceof ForeignKeyIntegrityConstraintViolationError) throw badRequest(`${what} refers to something that does not exist`, { [field]: 'refers to an unknown record' });
    throw err;
  }
}
