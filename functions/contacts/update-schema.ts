import * as z from 'zod/mini';
import { bodyError, contactAddress, name, properties } from './model.js';

/** A contact's change (apart from model.ts, so a create bundles none of it). */

/**
 * PATCH: what is given changes, the rest stays; `null` clears a name (SDK 6.38) or a property's
 * value. `email` moves the contact to another address (Resend's document has it; the SDK never sends it).
 */
export const updateContactSchema = z.strictObject(
  {
    email: z.optional(contactAddress),
    first_name: z.optional(z.nullable(name('first_name'))),
    last_name: z.optional(z.nullable(name('last_name'))),
    unsubscribed: z.optional(z.boolean({ error: 'unsubscribed must be true or false' })),
    properties: z.optional(properties),
  },
  bodyError,
);

export type UpdateContactInput = z.output<typeof updateContactSchema>;
