import * as z from 'zod/mini';
import { named, timestamp } from '../shared/answers.js';
import { PROPERTY_TYPES } from './model.js';

/**
 * The contact-property routes' answers (shared/answers.ts says how answers are described). A
 * property without a fallback value has no `fallback_value` field: Resend's document types it a
 * string or a number, never null.
 */

const propertyShape = {
  id: z.string(),
  key: z.string(),
  type: z.enum(PROPERTY_TYPES),
  fallback_value: z.optional(z.union([z.string(), z.number()])).register(z.globalRegistry, {
    description: "Shown for a contact that has no value of its own; of the property's type.",
  }),
  created_at: timestamp,
};

export const contactPropertySchema = named(
  'ContactProperty',
  z.object({ object: z.literal('contact_property'), ...propertyShape }),
  "A key contacts' properties may hold: a string or a number.",
);

export const contactPropertyListItemSchema = named(
  'ContactPropertyListItem',
  z.object(propertyShape),
  'A contact property, as listed.',
);
