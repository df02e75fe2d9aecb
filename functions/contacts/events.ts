import type { WebhookEvent } from '../webhooks/model.js';
import type { Contact, Subscription, Topic } from './contact.js';

/**
 * The audience's webhook events, in SDK 6.38's payloads (ContactEventData, ContactTopicsEventData,
 * and the topic's own fields): built here, raised by whichever concept changes the contact or topic
 * (contacts, imports, the unsubscribe pages, topics), through the webhooks' EventPublisher.
 * `audience_id` is SDK 6.38's field: audiences are segments here, so it is the first segment's id ("" when none).
 */
export function contactEvent(
  type: 'contact.created' | 'contact.updated' | 'contact.deleted',
  at: string,
  contact: Contact,
  segmentIds: readonly string[],
): WebhookEvent {
  return {
    type,
    created_at: at,
    key: `${type}|${contact.id}|${at}`,
    data: {
      id: contact.id,
      audience_id: segmentIds[0] ?? '',
      segment_ids: [...segmentIds],
      created_at: contact.created_at,
      updated_at: contact.updated_at,
      email: contact.email,
      // Left out when unset, as the answers leave them: Resend's document types them as strings.
      ...(contact.first_name === null ? {} : { first_name: contact.first_name }),
      ...(contact.last_name === null ? {} : { last_name: contact.last_name }),
      unsubscribed: contact.unsubscribed,
    },
  };
}

/** A contact's topic choices changed: the choices the change made (SDK 6.38's ContactTopicsEventData). */
export function contactTopicsEvent(
  at: string,
  contact: Pick<Contact, 'id' | 'email'>,
  topics: readonly { id: string; subscription: Subscription }[],
): WebhookEvent {
  return {
    type: 'contact.topics.updated',
    created_at: at,
    key: `contact.topics.updated|${contact.id}|${at}|${topics.map((t) => `${t.id}=${t.subscription}`).join(',')}`,
    data: { email: contact.email, topics: topics.map(({ id, subscription }) => ({ id, subscription })) },
  };
}

export function topicEvent(
  type: 'topic.created' | 'topic.updated' | 'topic.deleted',
  at: string,
  topic: Topic,
): WebhookEvent {
  return {
    type,
    created_at: at,
    key: `${type}|${topic.id}|${at}`,
    data: {
      id: topic.id,
      name: topic.name,
      description: topic.description,
      default_subscription: topic.default_subscription,
      deleted: type === 'topic.deleted',
      // Ours, beside SDK 6.38's TopicEventData.
      visibility: topic.visibility,
      created_at: topic.created_at,
      updated_at: topic.updated_at,
    },
  };
}
