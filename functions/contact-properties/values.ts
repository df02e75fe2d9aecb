import type { ContactProperty, PropertyValue } from '../contacts/contact.js';
import { validationError } from '../shared/errors.js';

/**
 * A contact's properties as given (`{key: value}`, Resend's shape) checked against the defined
 * contact properties, and kept by each property's id (contacts/contact.ts `props`). An unknown key, or
 * a value of the wrong type, is a 400 that names the property; `null` removes a value (Resend's
 * PATCH). Merged over `current` (a PATCH keeps the values it does not name).
 */
export function checkProperties(
  given: Readonly<Record<string, unknown>> | undefined,
  defined: readonly ContactProperty[],
  current: Readonly<Record<string, PropertyValue>> = {},
): Record<string, PropertyValue> {
  const props: Record<string, PropertyValue> = { ...current };
  if (!given) return props;
  const byKey = new Map(defined.map((property) => [property.key, property]));
  for (const [key, value] of Object.entries(given)) {
    const property = byKey.get(key);
    const field = `properties.${key}`;
    if (!property) {
      const message = `The contact property "${key}" does not exist: create it first (POST /v1/contact-properties).`;
      throw validationError(message, [{ field, message }]);
    }
    if (value === null || value === undefined) {
      delete props[property.id];
      continue;
    }
    if (
      property.type === 'number'
        ? typeof value !== 'number' || !Number.isFinite(value)
        : typeof value !== 'string'
    ) {
      const message = `The contact property "${key}" is a ${property.type}: ${JSON.stringify(value)} is not.`;
      throw validationError(message, [{ field, message }]);
    }
    props[property.id] = value as PropertyValue;
  }
  return props;
}

/** A contact's stored values as Resend shows them: `{key: value}`, for the properties still defined. */
export function propertiesAnswer(
  props: Readonly<Record<string, PropertyValue>>,
  defined: readonly ContactProperty[],
): Record<string, PropertyValue> {
  const answer: Record<string, PropertyValue> = {};
  for (const property of defined) {
    const value = props[property.id];
    if (value !== undefined) answer[property.key] = value;
  }
  return answer;
}
