import type { Contact, ContactProperty, Membership, Segment, Topic, TopicChoice } from './contact.js';

/**
 * What any concept reads of the audience (contacts, their memberships and choices, segments, topics,
 * properties): the one port the contacts, segments, topics, imports, unsubscribe pages and the send
 * gate share (adapters/dynamodb/audience-reads.ts). Writes stay with each concept's own port.
 */
export interface AudienceReads {
  /** The contact of this address (compared case-insensitively): one GetItem. */
  contactByAddress(address: string, consistent?: boolean): Promise<Contact | undefined>;
  /** The contact with this id: its id item, then its item. */
  contactById(id: string, consistent?: boolean): Promise<Contact | undefined>;
  /** By id, or by address when the string holds an `@` (the SDK puts either in a path). */
  contact(idOrEmail: string, consistent?: boolean): Promise<Contact | undefined>;
  /** The contacts of these addresses, by address lower-cased (absent: no contact). Batched reads. */
  contactsByAddresses(addresses: readonly string[]): Promise<Map<string, Contact>>;
  /** These contacts' choices for one topic, by contact id (absent: no choice). Batched reads. */
  choicesFor(topicId: string, contactIds: readonly string[]): Promise<Map<string, TopicChoice>>;
  /** Every topic choice of one contact (one Query of its partition). */
  choicesOf(contactId: string): Promise<TopicChoice[]>;
  /** Every segment membership of one contact (one Query of its partition). */
  membershipsOf(contactId: string): Promise<Membership[]>;
  segment(id: string): Promise<Segment | undefined>;
  /** These segments, by id (absent: no such segment). */
  segments(ids: readonly string[]): Promise<Map<string, Segment>>;
  topic(id: string): Promise<Topic | undefined>;
  /** Every topic, newest first (one partition). */
  topics(): Promise<Topic[]>;
  /** Every contact property, newest first (one partition). */
  properties(): Promise<ContactProperty[]>;
}
