/**
 * The zod pieces row schemas are built from (./result-parser.ts), as the pool's
 * type parsers hand values over (./type-parsers.ts): int8 and integers as
 * numbers, times as RFC 3339 strings, json/jsonb parsed, numeric read as
 * `::text` where its exact decimals matter.
 */
import { sql } from 'slonik';
import { z } from 'zod';

export const int = z.number().int();
export const num = z.number();
export const time = z.string();
export const text = z.string();
export const texts = z.array(z.string());
/** A numeric column read as `::text`, exact. */
export const decimal = z.string();
/** A jsonb object, passed through as read: z.record would rebuild it and drop a `__proto__` key the caller stored. */
export const jsonObject = z.custom<Record<string, unknown>>((v) => typeof v === 'object' && v !== null && !Array.isArray(v), {
  message: 'must be a JSON object',
});
/** Any JSON value, as stored. */
export const json = z.unknown();

/** `SELECT count(*)::int AS total`. */
export const total = z.object({ total: int });
/** `RETURNING id`. */
export const idRow = z.object({ id: int });

/**
 * A statement that answers no rows (an INSERT, UPDATE or DELETE without RETURNING), typed as such instead of
 * `sql.unsafe`: a row it did answer would be refused.
 */
export const noRows = sql.type(z.object({}).strict());

/** A jsonb object of header names to values (a provider group's static headers). */
export const headers = z.custom<Record<string, string>>((v) => typeof v === 'object' && v !== null && !Array.isArray(v), {
  message: 'must be a JSON object',
});
