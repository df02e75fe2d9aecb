import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { fromSesEvent, parseSesEventBody, type SesEvent } from '../adapters/ses/events.js';
import { type RecordEventDeps, recordDeliveryEvent } from '../core/use-cases/record-event.js';
import { logFor, logger } from '../observability/logger.js';
import { backgroundHandler } from '../observability/middleware.js';
import { partialBatch } from '../sqs-batch.js';
import { eventsConsumerDeps } from '../wiring.js';

/**
 * SES event consumer: SES configuration set → SNS (raw message delivery) → SQS → here.
 * Each record is one SES event; it moves the email's status forward (never back) and is
 * recorded as an event of the email. Failed records are retried individually.
 */
export const makeHandler =
  (deps: RecordEventDeps) =>
  (event: SQSEvent): Promise<SQSBatchResponse> =>
    partialBatch(event, (record) => processRecord(deps, record));

async function processRecord(deps: RecordEventDeps, record: SQSRecord): Promise<boolean> {
  let sesEvent: SesEvent;
  try {
    sesEvent = parseSesEventBody(record.body);
  } catch {
    logger.error('unreadable SES event', { messageId: record.messageId });
    return false;
  }
  const event = fromSesEvent(sesEvent);
  if (!event) return true; // not one of ours, or a type we do not track
  const log = logFor(event.emailId);
  try {
    const { statusChanged } = await recordDeliveryEvent({ ...deps, log }, event);
    log.info('ses event', { type: event.type, statusChanged });
    return true;
  } catch (error) {
    log.error('ses event failed', { type: event.type, error });
    return false;
  }
}

export const handler = backgroundHandler(() => makeHandler(eventsConsumerDeps()));
