import type { ContactProperty } from '../contacts/contact.js';
import { conflict, notFound } from '../shared/errors.js';
import { newUuid } from '../shared/ids.js';
import type { PageQuery } from '../shared/list.js';
import type { Clock } from '../shared/ports.js';
import { type CreatePropertyInput, checkFallback, type UpdatePropertyInput } from './model.js';
import type { ContactPropertyStore } from './ports.js';

/** The contact-property routes' use cases. */
export interface ContactPropertyDeps {
  properties: ContactPropertyStore;
  clock: Clock;
}

const propertyNotFound = (id: string) => notFound(`Contact property "${id}" not found.`);

/** A new property; its key must be free (409), its fallback value of its type (400). */
export async function createProperty(
  deps: ContactPropertyDeps,
  input: CreatePropertyInput,
): Promise<ContactProperty> {
  checkFallback(input.type, input.fallback_value);
  const property: ContactProperty = {
    id: newUuid(),
    key: input.key,
    type: input.type,
    fallback_value: input.fallback_value ?? null,
    created_at: deps.clock.now().toISOString(),
  };
  if (!(await deps.properties.create(property)))
    throw conflict(`A contact property with the key "${input.key}" exists already.`);
  return property;
}

export async function getProperty(deps: Pick<ContactPropertyDeps, 'properties'>, id: string) {
  const property = await deps.properties.get(id);
  if (!property) throw propertyNotFound(id);
  return property;
}

export const listProperties = (deps: Pick<ContactPropertyDeps, 'properties'>, page: PageQuery) =>
  deps.properties.list(page);

/** Its fallback value, of its type; left out, nothing changes. */
export async function updateProperty(
  deps: Pick<ContactPropertyDeps, 'properties'>,
  id: string,
  input: UpdatePropertyInput,
): Promise<ContactProperty> {
  const property = await getProperty(deps, id);
  if (input.fallback_value === undefined) return property;
  checkFallback(property.type, input.fallback_value);
  const updated = await deps.properties.setFallback(id, input.fallback_value);
  if (!updated) throw propertyNotFound(id);
  return updated;
}

/**
 * Deletes it: the property's item and its key's, nothing else. Contacts keep their values by the
 * property's id, which no defined property has any more, so no contact shows it (no scan).
 */
export async function deleteProperty(deps: Pick<ContactPropertyDeps, 'properties'>, id: string) {
  const property = await deps.properties.remove(id);
  if (!property) throw propertyNotFound(id);
  return property;
}
