import type { EmailEvent } from '../email.js';
import type { CounterName, Counters, EmailRepository } from '../ports.js';
import { type DeliveryEventType, statusForEvent } from '../status.js';

export interface DeliveryEvent {
  emailId: string;
  type: DeliveryEventType;
  at: string;
  recipients: string[];
  detail?: string;
  /** Every provider event says the provider accepted the email: when, and under which message id. */
  sent: { at: string; providerMessageId: string };
}

/**
 * Applies a provider event.
 * - `sent`: records that the provider accepted the email. This is what settles an attempt whose
 *   worker died or timed out after the provider took it, so it is never sent again.
 * - any other: recorded against the email (per-recipient detail); a final event moves the status
 *   forward when the email is still queued, and fills in `sent_at` if nothing recorded it yet.
 *   A duplicate or late event finds the email already final and changes nothing.
 */
/** The counter of each kind of event (one metric each, see ports.ts). */
const EVENT_COUNTERS: Record<DeliveryEventType, CounterName> = {
  sent: 'EventsSent',
  delivered: 'EventsDelivered',
  bounced: 'EventsBounced',
  complained: 'EventsComplained',
  delayed: 'EventsDelayed',
  failed: 'EventsFailed',
};

export async function recordDeliveryEvent(
  { emails, counters }: { emails: EmailRepository; counters?: Counters },
  event: DeliveryEvent,
): Promise<{ statusChanged: boolean }> {
  const { emailId, sent } = event;
  counters?.count(EVENT_COUNTERS[event.type]);
  if (event.type === 'sent') {
    await emails.markSent(emailId, sent.providerMessageId, sent.at);
    return { statusChanged: false };
  }
  const entry: EmailEvent = { type: event.type, at: event.at, recipients: event.recipients };
  if (event.detail) entry.detail = event.detail;
  await emails.addEvent(emailId, entry);
  const next = statusForEvent(event.type);
  if (!next) {
    // A delay or a complaint also means the provider has the email.
    await emails.markSent(
      emailId,
      sent.providerMessageId,
      sent.at,
      event.type === 'complained' ? 'complained' : 'delayed',
    );
    return { statusChanged: false };
  }
  const statusChanged = await emails.finish(emailId, next, event.at, {
    ...(next === 'delivered' || !event.detail ? {} : { reason: event.detail }),
    sent,
  });
  return { statusChanged };
}
