import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { fromSesEvent, parseSesEventBody, type SesEvent } from '../adapters/ses/events.js';
import { type DeliveryEvent, type RecordEventDeps, recordDeliveryEvents } from '../emails/record-event.js';
import { logFor, logger } from '../observability/logger.js';
import { backgroundHandler } from '../observability/middleware.js';
import { readOncePerInvocation } from '../webhooks/publish.js';
import { eventsConsumerDeps } from '../wiring.js';

/**
 * SES event consumer: SES configuration set → SNS (raw message delivery) → SQS → here, in batches.
 * Each record is one SES event; it moves the email's status forward (never back) and is recorded
 * as an event of the email (emails/record-event.ts: the batch's `sent` events are checked
 * in one read, and cost nothing when the consumer recorded the send). Failed records are retried
 * individually; an unreadable one goes to the dead-letter queue after its retries. The webhook
 * endpoints are read once a batch, at its first event raised.
 */
export const makeHandler =
  (deps: RecordEventDeps) =>
  async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const failed: string[] = [];
    const events: DeliveryEvent[] = [];
    const records: SQSRecord[] = [];
    for (const record of event.Records) {
      let sesEvent: SesEvent;
      try {
        sesEvent = parseSesEventBody(record.body);
      } catch {
        logger.error('unreadable SES event', { messageId: record.messageId });
        failed.push(record.messageId);
        continue;
      }
      const delivery = fromSesEvent(sesEvent);
      if (!delivery) continue; // not one of ours, or a type we do not track
      events.push(delivery);
      records.push(record);
    }
    const done = await recordDeliveryEvents(
      readOncePerInvocation(deps),
      events,
      (delivery, { statusChanged, skipped }) => {
        // One line per event that moved an email; a send the consumer had recorded is routine.
        const log = logFor(delivery.emailId);
        if (skipped)
          logger.debug('ses event already recorded', { email_id: delivery.emailId, type: delivery.type });
        else
          log.info('ses event', {
            type: delivery.type,
            statusChanged,
            ...(delivery.automated ? { automated: delivery.automated } : {}),
          });
      },
    );
    records.forEach((record, i) => {
      if (!done[i]) failed.push(record.messageId);
    });
    return { batchItemFailures: failed.map((itemIdentifier) => ({ itemIdentifier })) };
  };

export const handler = backgroundHandler(() => makeHandler(eventsConsumerDeps()));
