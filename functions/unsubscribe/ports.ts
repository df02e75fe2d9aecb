import type { Contact, Subscription } from '../contacts/contact.js';

/**
 * What the unsubscribe pages write (adapters/dynamodb/unsubscribe-store.ts), through the audience's
 * item builders (audience-items.ts); they read through AudienceReads.
 */
export interface UnsubscribeStore {
  /** Puts these topic choices of the contact (each its own item), those that differ from the stored one; the topic ids written. */
  setChoices(
    contact: Pick<Contact, 'id'>,
    choices: readonly { topicId: string; subscription: Subscription }[],
    at: string,
  ): Promise<string[]>;
  /** Sets the contact's global `unsubscribed`; the contact as it now is, or undefined when it did not change it (it is gone, or set meanwhile: read it again). */
  setUnsubscribed(contact: Contact, unsubscribed: boolean, at: string): Promise<Contact | undefined>;
  /**
   * Creates the contact of an address that has none, with these choices (the contact's item last);
   * undefined when a contact of the address was created meanwhile (the caller reads it and goes on).
   */
  createContact(
    contact: Contact,
    choices: readonly { topicId: string; subscription: Subscription }[],
  ): Promise<Contact | undefined>;
}
