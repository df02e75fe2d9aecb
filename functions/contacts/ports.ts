import type { Contact, Subscription } from './contact.js';

/** A page of contacts: Resend's cursors (`after`, `before`: a contact id, which sorts by time). */
export interface ContactPageQuery {
  limit: number;
  after?: string;
  before?: string;
}

export interface ContactPage {
  data: Contact[];
  has_more: boolean;
}

/** What a create writes beside the contact: the segments it joins and its topic choices. */
export interface NewContact {
  contact: Contact;
  segmentIds: readonly string[];
  topics: readonly { id: string; subscription: Subscription }[];
}

/**
 * The contacts' own writes (adapters/dynamodb/contact-writes.ts). Every other concept reads
 * contacts through AudienceReads (reads.ts).
 */
export interface ContactWrites {
  /**
   * The contact, its id item, its memberships and its choices, all or none. False (nothing
   * written) when a contact has this address already.
   */
  create(created: NewContact): Promise<boolean>;
  /**
   * An existing contact joins segments (a membership already there keeps its `created_at`) and
   * takes the topic choices given (each put over the one there): what a create for a known address
   * asks beside the contact itself.
   */
  join(
    contactId: string,
    segmentIds: readonly string[],
    topics: NewContact['topics'],
    at: string,
  ): Promise<void>;
  /**
   * `after` in place of `before`, on the condition that the stored contact is still `before`
   * (its `updated_at`); an address change moves the contact's item to its new address in the same
   * transaction. `'changed'`: another writer came first; `'taken'`: another contact has the new address.
   */
  update(before: Contact, after: Contact): Promise<'updated' | 'changed' | 'taken'>;
  /** The contact and its id item (its memberships and choices go off the request path). False: it was gone or changed. */
  remove(contact: Contact): Promise<boolean>;
}

/** Contacts listed newest first, without a scan (adapters/dynamodb/contact-listing.ts). */
export interface ContactListing {
  /** Every contact: a sorted merge of the CONTACT_SHARDS listing partitions. */
  contacts(page: ContactPageQuery): Promise<ContactPage>;
  /** One segment's members: its CONTACT_SHARDS member partitions merged, then their contacts. */
  segmentMembers(segmentId: string, page: ContactPageQuery): Promise<ContactPage>;
}
