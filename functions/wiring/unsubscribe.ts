import {
  audienceReads,
  emailRepository,
  metricsStore,
  openTable,
  repositoriesOf,
  unpublishedEventStore,
  webhookRepository,
} from '../adapters/dynamodb/repositories.js';
import { DynamoUnsubscribeStore } from '../adapters/dynamodb/unsubscribe-store.js';
import type { EmailRepository } from '../emails/ports.js';
import { countMetrics } from '../metrics/count.js';
import type { MetricsCounter } from '../metrics/ports.js';
import { log } from '../observability/logger.js';
import { counters } from '../observability/metrics.js';
import { loadConfig } from '../shared/config.js';
import type { Log } from '../shared/ports.js';
import { systemClock } from '../shared/ports.js';
import type { UnsubscribeDeps } from '../unsubscribe/preferences.js';
import { eventPublisher } from '../wiring.js';
import { unsubscribeKeys } from './unsubscribe-links.js';

/**
 * The wiring of the unsubscribe routes (token routes: no API keys, no request log). The page reads
 * only; the POST also writes, raises contact.* events and counts `unsubscribed` in the metrics.
 */
export function unsubscribeDeps(): UnsubscribeDeps & { log: Log } {
  const { TABLE_NAME, UNSUBSCRIBE_KEYS_SECRET } = loadConfig('TABLE_NAME', 'UNSUBSCRIBE_KEYS_SECRET');
  const table = openTable(TABLE_NAME);
  const base = {
    keys: unsubscribeKeys(UNSUBSCRIBE_KEYS_SECRET),
    reads: audienceReads(table),
    store: new DynamoUnsubscribeStore(table.db, table.name),
    clock: systemClock,
    log,
  };
  const queueUrl = process.env.WEBHOOK_QUEUE_URL;
  if (!queueUrl) return base;
  // The POST: it publishes and counts.
  const { WEBHOOK_QUEUE_URL } = loadConfig('WEBHOOK_QUEUE_URL');
  const { webhooks, unpublished, emails, metrics } = repositoriesOf(table, {
    webhooks: webhookRepository,
    unpublished: unpublishedEventStore,
    emails: emailRepository,
    metrics: metricsStore,
  });
  return {
    ...base,
    events: eventPublisher(webhooks, WEBHOOK_QUEUE_URL, unpublished),
    counted: unsubscribeCounter(emails, metrics),
  };
}

/**
 * Counts an opt-out as `unsubscribed` in the email metrics, under the sender domain of the email
 * whose link it came through (one Query of the email's items; an email past its retention counts
 * under `unknown`, as a count whose sender is unknown does). Never throws (metrics/count.ts).
 */
export function unsubscribeCounter(
  emails: Pick<EmailRepository, 'get'>,
  metrics: MetricsCounter,
): NonNullable<UnsubscribeDeps['counted']> {
  return async (emailId) => {
    const email = await emails.get(emailId).catch(() => null);
    await countMetrics({ metrics, counters, log }, email?.from, { unsubscribed: 1 }, emailId);
  };
}
