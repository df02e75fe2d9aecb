import * as z from 'zod/mini';
import type { ContactProperty, PropertyValue } from '../contacts/contact.js';
import { validationError } from '../shared/errors.js';

/**
 * Contact properties (Resend's): the keys a contact's `properties` may hold, each a string or a
 * number, with a fallback value for the contacts that have none. A contact's values are kept by
 * the property's id (contacts/contact.ts), so a deleted property vanishes from every contact at
 * once, with no scan, and one created again under the same key starts empty.
 */
export const PROPERTY_TYPES = ['string', 'number'] as const satisfies readonly ContactProperty['type'][];
export const PROPERTY_KEY = /^[A-Za-z0-9_]{1,50}$/;

const bodyError = {
  error: (issue: { code: string }) =>
    issue.code === 'unrecognized_keys' ? undefined : 'the body must be a JSON object',
};

const fallbackValue = z.optional(
  z.nullable(
    z.union([z.string(), z.number().check(z.refine(Number.isFinite, 'must be a finite number'))], {
      error: 'fallback_value must be a string or a number',
    }),
  ),
);

export const createPropertySchema = z.strictObject(
  {
    key: z
      .string({ error: 'key must be a string' })
      .check(z.regex(PROPERTY_KEY, 'key must be 1 to 50 letters, digits or underscores')),
    type: z.enum(PROPERTY_TYPES, { error: 'type must be string or number' }),
    fallback_value: fallbackValue,
  },
  bodyError,
);
export type CreatePropertyInput = z.output<typeof createPropertySchema>;

/** Resend's update: `fallback_value` only (`null` removes it); a property's key and type are fixed. */
export const updatePropertySchema = z.strictObject({ fallback_value: fallbackValue }, bodyError);
export type UpdatePropertyInput = z.output<typeof updatePropertySchema>;

/** A fallback value must be of the property's type (400 naming the field). */
export function checkFallback(type: ContactProperty['type'], value: PropertyValue | null | undefined): void {
  if (value === null || value === undefined || typeof value === type) return;
  const message = `fallback_value must be a ${type}, as the property is: ${JSON.stringify(value)} is not.`;
  throw validationError(message, [{ field: 'fallback_value', message }]);
}

/** A property as listed (Resend's ListContactPropertiesResponseSuccess items); no `fallback_value` when it has none. */
export const toPropertyListed = (property: ContactProperty) => ({
  id: property.id,
  key: property.key,
  type: property.type,
  ...(property.fallback_value === null ? {} : { fallback_value: property.fallback_value }),
  created_at: property.created_at,
});

/** How the API shows a property (Resend's GetContactPropertyResponseSuccess). */
export const toPropertyBody = (property: ContactProperty) => ({
  object: 'contact_property' as const,
  ...toPropertyListed(property),
});
