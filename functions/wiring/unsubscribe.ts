import {
  audienceReads,
  emailRepository,
  metricsStore,
  openTable,
  repositoriesOf,
  type Table,
  unpublishedEventStore,
  webhookRepository,
} from '../adapters/dynamodb/repositories.js';
import { DynamoUnsubscribeStore } from '../adapters/dynamodb/unsubscribe-store.js';
import { deliveryQueueOnFirstUse } from '../adapters/sqs/delivery-queue-on-first-use.js';
import type { EmailRepository } from '../emails/ports.js';
import { countMetrics } from '../metrics/count.js';
import type { MetricsCounter } from '../metrics/ports.js';
import { log } from '../observability/logger.js';
import { counters } from '../observability/metrics.js';
import { loadConfig } from '../shared/config.js';
import type { Log } from '../shared/ports.js';
import { systemClock } from '../shared/ports.js';
import type { UnsubscribeDeps } from '../unsubscribe/preferences.js';
import { WebhookPublisher } from '../webhooks/publish.js';
import { unsubscribeKeys } from './unsubscribe-links.js';

/** What both unsubscribe routes read with (token routes: no API keys, no request log). */
function readingDeps(table: Table, secretId: string): UnsubscribeDeps & { log: Log } {
  return {
    keys: unsubscribeKeys(secretId),
    reads: audienceReads(table),
    store: new DynamoUnsubscribeStore(table.db, table.name),
    clock: systemClock,
    log,
  };
}

/**
 * The wiring of the preference page (GET): it only reads, so it is given no webhook queue (none is
 * set on its function: its catalog entry, test/infra/environment.test.ts).
 */
export function unsubscribePageDeps(): UnsubscribeDeps & { log: Log } {
  const { TABLE_NAME, UNSUBSCRIBE_KEYS_SECRET } = loadConfig('TABLE_NAME', 'UNSUBSCRIBE_KEYS_SECRET');
  return readingDeps(openTable(TABLE_NAME), UNSUBSCRIBE_KEYS_SECRET);
}

/** The wiring of the POST: it also writes, raises contact.* events and counts `unsubscribed`. */
export function unsubscribeDeps(): UnsubscribeDeps & { log: Log } {
  const { TABLE_NAME, UNSUBSCRIBE_KEYS_SECRET, WEBHOOK_QUEUE_URL } = loadConfig(
    'TABLE_NAME',
    'UNSUBSCRIBE_KEYS_SECRET',
    'WEBHOOK_QUEUE_URL',
  );
  const table = openTable(TABLE_NAME);
  const { webhooks, unpublished, emails, metrics } = repositoriesOf(table, {
    webhooks: webhookRepository,
    unpublished: unpublishedEventStore,
    emails: emailRepository,
    metrics: metricsStore,
  });
  return {
    ...readingDeps(table, UNSUBSCRIBE_KEYS_SECRET),
    // The queue's client is loaded when some endpoint takes the event (most deployments subscribe none).
    events: new WebhookPublisher({
      webhooks,
      queue: deliveryQueueOnFirstUse(WEBHOOK_QUEUE_URL),
      counters,
      unpublished,
    }),
    counted: unsubscribeCounter(emails, metrics),
  };
}

/**
 * Counts an opt-out as `unsubscribed` in the email metrics, under the sender domain of the email
 * whose link it came through (one Query of the email's items; an email past its retention counts
 * under `unknown`, as a count whose sender is unknown does), and under its broadcast when it is a
 * broadcast's. Never throws (metrics/count.ts).
 */
export function unsubscribeCounter(
  emails: Pick<EmailRepository, 'get'>,
  metrics: MetricsCounter,
): NonNullable<UnsubscribeDeps['counted']> {
  return async (emailId) => {
    const email = await emails.get(emailId).catch(() => null);
    await countMetrics(
      { metrics, counters, log },
      email?.from,
      { unsubscribed: 1 },
      emailId,
      email?.broadcast_id,
    );
  };
}
