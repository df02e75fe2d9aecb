import type * as z from 'zod/mini';
import { describeFields, fieldErrorsOf, validationError } from './errors.js';

/** Validates input with a zod schema; failures become a 400 that names each offending field. */
export function parseInput<S extends z.ZodMiniType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const fields = fieldErrorsOf(result.error.issues as Parameters<typeof fieldErrorsOf>[0]);
  throw validationError(`Invalid request: ${describeFields(fields)}`, fields);
}
