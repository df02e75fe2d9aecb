import type { ContactProperty, PropertyValue } from '../contacts/contact.js';
import type { PageQuery } from '../shared/list.js';

/** Where contact properties are kept (adapters/dynamodb/contact-property-store.ts). */
export interface ContactPropertyStore {
  /** Puts a new property unless its key is taken (false: taken by a property that exists). */
  create(property: ContactProperty): Promise<boolean>;
  /** Read strongly consistent; undefined when there is none. */
  get(id: string): Promise<ContactProperty | undefined>;
  /** Newest first, in pages. */
  list(page: PageQuery): Promise<{ data: ContactProperty[]; has_more: boolean }>;
  /** Sets its fallback value (null: none); the property it now is, or undefined when there is none. */
  setFallback(id: string, value: PropertyValue | null): Promise<ContactProperty | undefined>;
  /** Deletes it and frees its key; the property it was, or undefined when there was none. */
  remove(id: string): Promise<ContactProperty | undefined>;
}
