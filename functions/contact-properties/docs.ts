import { LIST, page, ref, removed, T0 } from '../shared/examples.js';
import type { DocsOf } from '../shared/route.js';
import type { CONTACT_PROPERTY_ROUTES } from './routes.js';

/** The contact properties' routes in the OpenAPI document: their words and examples (routes.ts declares them). */

const PROPERTY_ID = '019ac4b9-6c2e-7f45-a1d8-3b7e9c0f5a26';

const propertyListed = {
  id: PROPERTY_ID,
  key: 'plan',
  type: 'string',
  fallback_value: 'free',
  created_at: T0,
};

export const CONTACT_PROPERTY_DOCS: DocsOf<typeof CONTACT_PROPERTY_ROUTES> = {
  'create-contact-property': {
    ok: 'Created.',
    example: ref('contact_property', PROPERTY_ID),
    requestExample: { key: 'plan', type: 'string', fallback_value: 'free' },
    description:
      "`key`: 1 to 50 letters, digits or underscores, unique (409 when taken). `type`: `string` or `number`, fixed once created. `fallback_value` (optional) must be of that type. A contact's `properties` may then hold the key; a value of another type is a 400 naming the property.",
  },
  'list-contact-properties': {
    ok: 'A page of contact properties.',
    example: page([propertyListed]),
    description: `${LIST} Cursors are property ids.`,
  },
  'get-contact-property': {
    ok: 'The contact property.',
    example: { object: 'contact_property', ...propertyListed },
    description: 'A property without a fallback value has no `fallback_value` field.',
  },
  'update-contact-property': {
    ok: 'Updated.',
    example: ref('contact_property', PROPERTY_ID),
    requestExample: { fallback_value: 'trial' },
    description:
      "`fallback_value` only, of the property's type (`null` removes it); a key or type is a 400 (they are fixed).",
  },
  'delete-contact-property': {
    ok: 'Deleted.',
    example: removed('contact_property', PROPERTY_ID),
    description:
      "The property and its key go at once, and with them every contact's value of it: contacts keep values by the property's id, so nothing is scanned, and a property created again under the same key starts with no values.",
  },
};
