import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { createDocumentClient } from '../adapters/dynamodb/client.js';
import { DynamoEmailRepository } from '../adapters/dynamodb/email-repository.js';
import { fromSesEvent, type SesEvent } from '../adapters/ses/events.js';
import { lazy, loadConfig } from '../config.js';
import type { EmailRepository } from '../core/ports.js';
import { recordDeliveryEvent } from '../core/use-cases/record-event.js';
import { log } from '../http/log.js';
import { partialBatch } from '../sqs-batch.js';

/**
 * SES event consumer: SES configuration set → SNS (raw message delivery) → SQS → here.
 * Each record is one SES event; it moves the email's status forward (never back) and is
 * recorded as an event of the email. Failed records are retried individually.
 */
export const makeHandler =
  (deps: { emails: EmailRepository }) =>
  (event: SQSEvent): Promise<SQSBatchResponse> =>
    partialBatch(event, (record) => processRecord(deps.emails, record));

async function processRecord(emails: EmailRepository, record: SQSRecord): Promise<boolean> {
  let sesEvent: SesEvent;
  try {
    const parsed = JSON.parse(record.body);
    // Accept the SNS envelope too, in case raw message delivery is ever turned off.
    sesEvent =
      parsed?.Type === 'Notification' && typeof parsed.Message === 'string'
        ? JSON.parse(parsed.Message)
        : parsed;
  } catch {
    log.error('unreadable SES event', { messageId: record.messageId });
    return false;
  }
  const event = fromSesEvent(sesEvent);
  if (!event) return true; // not one of ours, or a type we do not track
  try {
    const { statusChanged } = await recordDeliveryEvent(emails, event);
    log.info('ses event', { id: event.emailId, type: event.type, statusChanged });
    return true;
  } catch (error) {
    log.error('ses event failed', { id: event.emailId, type: event.type, error: String(error) });
    return false;
  }
}

export const handler = lazy(() => {
  const { TABLE_NAME } = loadConfig('TABLE_NAME');
  return makeHandler({ emails: new DynamoEmailRepository(createDocumentClient(), TABLE_NAME) });
});
