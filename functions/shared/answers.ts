import * as z from 'zod/mini';

/**
 * The answers of the API are described once, by zod schemas in each concept's `answers.ts`, which
 * only the OpenAPI document (api-reference/document.ts) and the tests load: the contract test checks
 * every answer the end-to-end tests receive against them, so a field added to an answer and not
 * there fails a test. The requests are described by the schemas the handlers validate with.
 *
 * Each schema registered in `components` becomes `#/components/schemas/<id>`.
 */
export const components = z.registry<{ id: string; description?: string }>();

export const named = <S extends z.ZodMiniType>(id: string, schema: S, description?: string): S => {
  components.add(schema, { id, ...(description ? { description } : {}) });
  return schema;
};

/** An ISO 8601 time in UTC, as every `*_at` field. */
export const timestamp = z.string().register(z.globalRegistry, { format: 'date-time' });

/** The one error shape (shared/errors.ts). */
export const errorSchema = named(
  'Error',
  z.object({
    statusCode: z.number().check(z.int()),
    name: z.string(),
    message: z.string(),
    errors: z.optional(z.array(z.object({ field: z.string(), message: z.string() }))),
  }),
  'Every error: its status code, a stable name (as Resend names them), a message that says what to do, and for a 400 the offending fields.',
);

/** A page of a list: `{object: "list", has_more, data}`. */
export const listOf = <S extends z.ZodMiniType>(item: S) =>
  z.object({ object: z.literal('list'), has_more: z.boolean(), data: z.array(item) });

/** `{object, id}`: what most changes answer. */
export const reference = (object: string) => z.object({ object: z.literal(object), id: z.string() });

/** `{object, id, deleted: true}`: what a removal answers. */
export const deletion = (object: string) =>
  z.object({ object: z.literal(object), id: z.string(), deleted: z.literal(true) });

/** A list of addresses, as answers show them. */
export const addressArray = z.array(z.string());
