import { newSqsClient } from '../adapters/aws-clients.js';
import { DynamoRawSweepCursor } from '../adapters/dynamodb/raw-sweep-cursor.js';
import {
  metricsStore,
  openTable,
  receivedEmailRepository,
  repositoriesOf,
  type Table,
  unpublishedEventStore,
  webhookRepository,
} from '../adapters/dynamodb/repositories.js';
import { newS3Client } from '../adapters/s3/client.js';
import { S3ReceivedMailStore } from '../adapters/s3/received-mail.js';
import { SqsFailedReceipts } from '../adapters/sqs/received-failures.js';
import { log } from '../observability/logger.js';
import { counters } from '../observability/metrics.js';
import type { ReceiveDeps } from '../receiving/receive.js';
import type { SweepReceivedDeps } from '../receiving/sweep.js';
import { loadConfig } from '../shared/config.js';
import { systemClock } from '../shared/ports.js';
import { eventPublisher } from '../wiring.js';

/**
 * The wiring of receiving's workers, apart from functions/wiring.ts so that no API function's
 * bundle reaches the received mail's adapters (and the parser, which the handlers import).
 */

/** receive-email: the received emails, their objects, the metrics and the webhooks. */
export function receiveDeps(): ReceiveDeps {
  return receiveDepsOn(openTable(loadConfig('TABLE_NAME').TABLE_NAME));
}

function receiveDepsOn(table: Table): ReceiveDeps {
  const config = loadConfig('CONTENT_BUCKET', 'WEBHOOK_QUEUE_URL', 'RECEIVED_RETENTION_DAYS');
  const { webhooks, metrics, unpublished } = repositoriesOf(table, {
    webhooks: webhookRepository,
    metrics: metricsStore,
    unpublished: unpublishedEventStore,
  });
  return {
    received: receivedEmailRepository(table, config.RECEIVED_RETENTION_DAYS),
    mail: new S3ReceivedMailStore(newS3Client(), config.CONTENT_BUCKET),
    metrics,
    events: eventPublisher(webhooks, config.WEBHOOK_QUEUE_URL, unpublished),
    clock: systemClock,
    log,
    counters,
  };
}

/** sweep-received: the above, receive-email's failure destination queue and where its listing stands. */
export function sweepReceivedDeps(): SweepReceivedDeps {
  const config = loadConfig('TABLE_NAME', 'RECEIVED_FAILURES_QUEUE_URL');
  const table = openTable(config.TABLE_NAME);
  return {
    ...receiveDepsOn(table),
    failures: new SqsFailedReceipts(newSqsClient(), config.RECEIVED_FAILURES_QUEUE_URL),
    rawCursor: new DynamoRawSweepCursor(table.db, table.name),
  };
}
