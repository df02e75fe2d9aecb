import type {
  Contact,
  ContactProperty,
  Membership,
  PropertyValue,
  Segment,
  Topic,
  TopicChoice,
} from '../../contacts/contact.js';
import { addressKey } from '../../contacts/contact.js';
import { CONTACT_SHARDS, INDEXES, keys, shardOf } from './table.js';

/**
 * The audience concepts' items (table.ts has the layout): what every writer puts and every reader
 * parses, in one place, so contacts, segments, topics, properties, imports, the unsubscribe pages and
 * the send gate agree on them.
 */
type Item = Record<string, unknown>;

const TIME = INDEXES.emailsByTime;
const STATUS = INDEXES.emailsByStatus;

/** The shard of a contact among CONTACT_SHARDS: its listing entry's, its memberships' and its choices'. */
export const contactShard = (contactId: string): number => shardOf(contactId, CONTACT_SHARDS);

export const contactKey = (address: string) => ({ pk: keys.contact(address), sk: keys.contactSk });
export const contactIdKey = (id: string) => ({ pk: keys.contactId(id), sk: keys.contactIdSk });
export const membershipKey = (contactId: string, segmentId: string) => ({
  pk: keys.contactOf(contactId),
  sk: keys.membershipSk(segmentId),
});
export const choiceKey = (contactId: string, topicId: string) => ({
  pk: keys.contactOf(contactId),
  sk: keys.choiceSk(topicId),
});
export const segmentKey = (id: string) => ({ pk: keys.segments, sk: keys.segment(id) });
export const topicKey = (id: string) => ({ pk: keys.topics, sk: keys.topic(id) });
export const propertyKey = (id: string) => ({ pk: keys.contactProperties, sk: keys.contactProperty(id) });
export const propertyKeyKey = (key: string) => ({
  pk: keys.contactPropertyKey(key),
  sk: keys.contactPropertyKeySk,
});

/** The contact's item: keyed by its address (lower-cased), listed under CONTACTS#<shard> by id. */
export const contactItem = (contact: Contact): Item => ({
  ...contactKey(contact.email),
  id: contact.id,
  email: contact.email,
  address: addressKey(contact.email),
  first_name: contact.first_name,
  last_name: contact.last_name,
  unsubscribed: contact.unsubscribed,
  props: contact.props,
  created_at: contact.created_at,
  updated_at: contact.updated_at,
  [TIME.partitionKey]: keys.contacts(contactShard(contact.id)),
  [TIME.sortKey]: contact.id,
});

/** The small item naming a contact's address by its id. */
export const contactIdItem = (contact: Pick<Contact, 'id' | 'email'>): Item => ({
  ...contactIdKey(contact.id),
  id: contact.id,
  address: addressKey(contact.email),
});

export const membershipItem = (membership: Membership): Item => ({
  ...membershipKey(membership.contact_id, membership.segment_id),
  ...membership,
  [TIME.partitionKey]: keys.segmentMembers(membership.segment_id, contactShard(membership.contact_id)),
  [TIME.sortKey]: membership.contact_id,
});

export const choiceItem = (choice: TopicChoice): Item => ({
  ...choiceKey(choice.contact_id, choice.topic_id),
  ...choice,
  [STATUS.partitionKey]: keys.topicChoices(choice.topic_id, contactShard(choice.contact_id)),
  [STATUS.sortKey]: choice.contact_id,
});

export const segmentItem = (segment: Segment): Item => ({ ...segmentKey(segment.id), ...segment });
export const topicItem = (topic: Topic): Item => ({ ...topicKey(topic.id), ...topic });
export const propertyItem = (property: ContactProperty): Item => ({
  ...propertyKey(property.id),
  ...property,
});
/** The item that makes a property's key unique (a conditional put beside the property's). */
export const propertyKeyItem = (property: Pick<ContactProperty, 'id' | 'key'>): Item => ({
  ...propertyKeyKey(property.key),
  id: property.id,
  key: property.key,
});

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

export const toContact = (item: Item): Contact => ({
  id: String(item.id),
  email: String(item.email),
  first_name: text(item.first_name),
  last_name: text(item.last_name),
  unsubscribed: item.unsubscribed === true,
  props: (item.props as Record<string, PropertyValue> | undefined) ?? {},
  created_at: String(item.created_at),
  updated_at: String(item.updated_at ?? item.created_at),
});

export const toMembership = (item: Item): Membership => ({
  contact_id: String(item.contact_id),
  segment_id: String(item.segment_id),
  created_at: String(item.created_at),
});

export const toChoice = (item: Item): TopicChoice => ({
  contact_id: String(item.contact_id),
  topic_id: String(item.topic_id),
  subscription: item.subscription === 'opt_in' ? 'opt_in' : 'opt_out',
  updated_at: String(item.updated_at),
});

export const toSegment = (item: Item): Segment => ({
  id: String(item.id),
  name: String(item.name),
  created_at: String(item.created_at),
});

export const toTopic = (item: Item): Topic => ({
  id: String(item.id),
  name: String(item.name),
  description: text(item.description),
  default_subscription: item.default_subscription === 'opt_in' ? 'opt_in' : 'opt_out',
  visibility: item.visibility === 'public' ? 'public' : 'private',
  created_at: String(item.created_at),
  updated_at: String(item.updated_at ?? item.created_at),
});

export const toProperty = (item: Item): ContactProperty => ({
  id: String(item.id),
  key: String(item.key),
  type: item.type === 'number' ? 'number' : 'string',
  fallback_value: (item.fallback_value as PropertyValue | null | undefined) ?? null,
  created_at: String(item.created_at),
});
