import * as z from 'zod/mini';
import { EMAIL_STATUSES } from '../core/status.js';

/**
 * The answers of the API, described once, for the OpenAPI document (document.ts). The requests are
 * described by the schemas the handlers validate with (operations.ts names them); the answers by
 * these, which only the document uses: the contract test checks every answer the end-to-end tests
 * receive against them, so a field added to an answer and not here fails a test.
 *
 * Each schema registered in `components` becomes `#/components/schemas/<id>`.
 */
export const components = z.registry<{ id: string; description?: string }>();

const named = <S extends z.ZodMiniType>(id: string, schema: S, description?: string): S => {
  components.add(schema, { id, ...(description ? { description } : {}) });
  return schema;
};

/** An ISO 8601 time in UTC, as every `*_at` field. */
export const timestamp = z.string().register(z.globalRegistry, { format: 'date-time' });

/** The one error shape (core/errors.ts). */
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

/** What a send answers (POST /v1/emails). */
export const sentEmailSchema = named(
  'SentEmail',
  z.object({
    id: z.string(),
    status: z.enum(EMAIL_STATUSES),
    created_at: timestamp,
    last_event: z.optional(z.literal('scheduled')),
    scheduled_at: z.optional(timestamp),
  }),
  'The accepted email: its id, its status now (`queued` when new) and, when scheduled, its time.',
);
