import type { SESEvent } from 'aws-lambda';
import { logger } from '../observability/logger.js';
import { backgroundHandler } from '../observability/middleware.js';
import { receiptsOf } from '../receiving/events.js';
import { type ReceiveDeps, type ReceiveResult, receive } from '../receiving/receive.js';
import { readOncePerInvocation } from '../webhooks/publish.js';
import { receiveDeps } from '../wiring/receiving.js';

/**
 * SES's receipt rule's Lambda action (invocation type Event), after its S3 action wrote the message
 * to `received/raw/<SES message id>`; the local SMTP twin invokes it with the same event. Each
 * record's message is parsed, stored once and announced (receiving/receive.ts). A failure throws:
 * Lambda retries the asynchronous invocation, then hands the event to the failure destination,
 * which sweep-received reads.
 */
export const makeHandler =
  (given: ReceiveDeps) =>
  async (event: SESEvent): Promise<{ received: ReceiveResult['email']['id'][] }> => {
    const deps = readOncePerInvocation(given);
    const received: string[] = [];
    for (const receipt of receiptsOf(event)) {
      const { email, created, published } = await receive(deps, receipt);
      logger.info('received email', {
        received_email_id: email.id,
        ses_message_id: receipt.sesMessageId,
        created,
        published,
        ...(email.parse_error ? { parse_error: email.parse_error } : {}),
      });
      received.push(email.id);
    }
    return { received };
  };

export const handler = backgroundHandler(() => makeHandler(receiveDeps()));
