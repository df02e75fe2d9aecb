import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { newSqsClient } from '../adapters/aws-clients.js';
import { DynamoContactListing } from '../adapters/dynamodb/contact-listing.js';
import { DynamoContactWrites } from '../adapters/dynamodb/contact-writes.js';
import {
  audienceReads,
  unpublishedEventStoreByPut,
  webhookRepository,
} from '../adapters/dynamodb/repositories.js';
import type { AudienceCleanup, CleanupJob } from '../contacts/cleanup-jobs.js';
import type { ContactDeps } from '../contacts/contacts.js';
import { loadConfig } from '../shared/config.js';
import { apiDeps, eventPublisher } from '../wiring.js';

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

/**
 * The audience clean-up queue (AUDIENCE_CLEANUP_QUEUE_URL), one job a message.
 * To be joined with the segments' SQS adapter (adapters/sqs/audience-cleanup-queue.ts) at the merge.
 */
const cleanupQueue = (queueUrl: string): AudienceCleanup => {
  const sqs = newSqsClient();
  return {
    async enqueue(job: CleanupJob) {
      await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(job) }));
    },
  };
};

const refuses = (what: string): AudienceCleanup => ({
  enqueue: async () => {
    throw new Error(`${what} does not delete contacts`);
  },
});

/**
 * A contact function's dependencies: the audience's reads, the contacts' writes and listings, and
 * for those that change a contact its events (WEBHOOK_QUEUE_URL) and for those that delete one the
 * clean-up queue (AUDIENCE_CLEANUP_QUEUE_URL): each reads only the settings its route declares.
 */
export function contactApiDeps(name: ContactFunction) {
  const deps = apiDeps(name, {
    reads: audienceReads,
    webhooks: webhookRepository,
    unpublished: unpublishedEventStoreByPut,
  });
  const { db, name: tableName } = deps.table;
  const events = PUBLISHING.has(name)
    ? eventPublisher(deps.webhooks, loadConfig('WEBHOOK_QUEUE_URL').WEBHOOK_QUEUE_URL, deps.unpublished)
    : undefined;
  const cleanup = DELETING.has(name)
    ? cleanupQueue(loadConfig('AUDIENCE_CLEANUP_QUEUE_URL').AUDIENCE_CLEANUP_QUEUE_URL)
    : refuses(name);
  return {
    ...deps,
    contacts: new DynamoContactWrites(db, tableName),
    listing: new DynamoContactListing(db, tableName),
    cleanup,
    ...(events ? { events } : {}),
  } satisfies ContactDeps & Record<string, unknown>;
}
