import {
  audienceReads,
  type RepositoryFactories,
  unpublishedEventStore,
  webhookRepository,
} from '../adapters/dynamodb/repositories.js';
import { onFirstUse } from '../adapters/on-first-use.js';
import { deliveryQueueOnFirstUse } from '../adapters/sqs/delivery-queue-on-first-use.js';
import type { AudienceCleanup } from '../contacts/cleanup-jobs.js';
import { loadConfig } from '../shared/config.js';
import { WebhookPublisher } from '../webhooks/publish.js';
import { apiDeps } from '../wiring.js';

type ContactFunction =
  | 'create-contact'
  | 'list-contacts'
  | 'get-contact'
  | 'update-contact'
  | 'delete-contact'
  | 'create-audience-contact'
  | 'list-audience-contacts'
  | 'get-audience-contact'
  | 'update-audience-contact'
  | 'delete-audience-contact';

/** The functions that raise contact events (the others read only). */
const PUBLISHING = new Set<ContactFunction>([
  'create-contact',
  'update-contact',
  'delete-contact',
  'create-audience-contact',
  'update-audience-contact',
  'delete-audience-contact',
]);

const DELETING = new Set<ContactFunction>(['delete-contact', 'delete-audience-contact']);

/** The audience clean-up queue, its SQS code loaded on the first delete (an island). */
function cleanupOnFirstUse(queueUrl: string): AudienceCleanup {
  const queue = onFirstUse(async () =>
    (await import('../adapters/sqs/audience-cleanup-island.js')).createAudienceCleanup(queueUrl),
  );
  return { enqueue: async (job) => (await queue()).enqueue(job) };
}

const refuses = (name: string): AudienceCleanup => ({
  enqueue: async () => {
    throw new Error(`${name} deletes no contact`);
  },
});

/**
 * A contact function's dependencies: the audience's reads, the factories it names (the contacts'
 * writes, `contacts: contactWrites`, or listings, `listing: contactListing`: its bundle holds only those), and
 * for those that change a contact its events (WEBHOOK_QUEUE_URL) and for those that delete one the
 * clean-up queue (AUDIENCE_CLEANUP_QUEUE_URL): each reads only the settings its route declares.
 * Both queues are reached through SQS code loaded on first use, so the table's budget holds at
 * init: a change publishes only when an endpoint is subscribed (the endpoints are read from the
 * table first), and a delete's one message is not worth SQS's client in every cold start.
 */
export function contactApiDeps<R extends RepositoryFactories>(name: ContactFunction, repositories: R) {
  const deps = apiDeps(name, {
    ...repositories,
    reads: audienceReads,
    webhooks: webhookRepository,
    unpublished: unpublishedEventStore,
  });
  const events = PUBLISHING.has(name)
    ? new WebhookPublisher({
        webhooks: deps.webhooks,
        queue: deliveryQueueOnFirstUse(loadConfig('WEBHOOK_QUEUE_URL').WEBHOOK_QUEUE_URL),
        counters: deps.counters,
        unpublished: deps.unpublished,
      })
    : undefined;
  return {
    ...deps,
    cleanup: DELETING.has(name)
      ? cleanupOnFirstUse(loadConfig('AUDIENCE_CLEANUP_QUEUE_URL').AUDIENCE_CLEANUP_QUEUE_URL)
      : refuses(name),
    ...(events ? { events } : {}),
  };
}
