import { newSqsClient } from '../adapters/aws-clients.js';
import { DynamoContactPropertyStore } from '../adapters/dynamodb/contact-property-store.js';
import {
  audienceReads,
  type Table,
  unpublishedEventStore,
  webhookRepository,
} from '../adapters/dynamodb/repositories.js';
import { DynamoTopicStore } from '../adapters/dynamodb/topic-store.js';
import { SqsAudienceCleanup } from '../adapters/sqs/audience-cleanup-queue.js';
import { deliveryQueueOnFirstUse } from '../adapters/sqs/delivery-queue-on-first-use.js';
import { loadConfig } from '../shared/config.js';
import { WebhookPublisher } from '../webhooks/publish.js';
import { apiDeps, eventPublisher } from '../wiring.js';

/** Topics and a contact's choices of them (adapters/dynamodb/topic-store.ts). */
const topicStore = (t: Table) => new DynamoTopicStore(t.db, t.name);
/** Contact properties (adapters/dynamodb/contact-property-store.ts). */
const contactPropertyStore = (t: Table) => new DynamoContactPropertyStore(t.db, t.name);

type TopicReader = 'list-topics' | 'get-topic' | 'list-contact-topics';
type TopicWriter = 'create-topic' | 'update-topic' | 'update-contact-topics';

/** The topic routes that only read: the topics, and the audience's reads (a contact and its choices). */
export const topicReadDeps = (name: TopicReader) =>
  apiDeps(name, { topics: topicStore, audience: audienceReads });

/** The topic routes that change something: the above, and where their webhook events go. */
export function topicWriteDeps(name: TopicWriter) {
  const deps = apiDeps(name, {
    topics: topicStore,
    audience: audienceReads,
    webhooks: webhookRepository,
    unpublished: unpublishedEventStore,
  });
  const { WEBHOOK_QUEUE_URL } = loadConfig('WEBHOOK_QUEUE_URL');
  // SQS loaded on first use: an event is published only when some endpoint takes its type.
  const events = new WebhookPublisher({
    webhooks: deps.webhooks,
    queue: deliveryQueueOnFirstUse(WEBHOOK_QUEUE_URL),
    counters: deps.counters,
    unpublished: deps.unpublished,
  });
  return { ...deps, events };
}

/**
 * delete-topic: the above, and the audience clean-up queue its choices are handed to (SQS on
 * every request, so at init: lib/budgets.ts).
 */
export function deleteTopicDeps() {
  const deps = apiDeps('delete-topic', {
    topics: topicStore,
    webhooks: webhookRepository,
    unpublished: unpublishedEventStore,
  });
  const { WEBHOOK_QUEUE_URL, AUDIENCE_CLEANUP_QUEUE_URL } = loadConfig(
    'WEBHOOK_QUEUE_URL',
    'AUDIENCE_CLEANUP_QUEUE_URL',
  );
  return {
    ...deps,
    events: eventPublisher(deps.webhooks, WEBHOOK_QUEUE_URL, deps.unpublished),
    cleanup: new SqsAudienceCleanup(newSqsClient(), AUDIENCE_CLEANUP_QUEUE_URL),
  };
}

type PropertyFunction =
  | 'create-contact-property'
  | 'list-contact-properties'
  | 'get-contact-property'
  | 'update-contact-property'
  | 'delete-contact-property';

/** The contact-property routes: the properties. */
export const contactPropertyDeps = (name: PropertyFunction) =>
  apiDeps(name, { properties: contactPropertyStore });
