/**
 * Rows typed by their query: a query written `sql.type(schema)` has each row
 * parsed by its schema (zod, slonik's partner) before the caller sees it, so a
 * row that breaks its type fails where it is read (slonik's
 * SchemaValidationError, naming the query and the offending fields) instead of
 * travelling on as a wrong value. Queries without a schema pass unchanged.
 */
import { SchemaValidationError, type Interceptor } from 'slonik';

export const resultParser: Interceptor = {
  name: 'result-parser',
  transformRow: (context, query, row) => {
    const parser = context.resultParser;
    if (!parser) return row;
    const parsed = parser.safeParse(row);
    if (!parsed.success) throw new SchemaValidationError(query, row, parsed.error.issues);
    return parsed.data as typeof row;
  },
};
