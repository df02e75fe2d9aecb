import type { EmailEvent } from '../email.js';
import type { EmailRepository } from '../ports.js';
import { type DeliveryEventType, statusForEvent } from '../status.js';

export interface DeliveryEvent {
  emailId: string;
  type: DeliveryEventType;
  at: string;
  recipients: string[];
  detail?: string;
}

/**
 * Applies a provider event: the event is recorded against the email (per-recipient detail), and the
 * status moves forward when the event is final and the email is still queued. A duplicate or late
 * event finds the email already final and changes nothing.
 */
export async function recordDeliveryEvent(
  emails: EmailRepository,
  event: DeliveryEvent,
): Promise<{ statusChanged: boolean }> {
  const entry: EmailEvent = { type: event.type, at: event.at, recipients: event.recipients };
  if (event.detail) entry.detail = event.detail;
  await emails.addEvent(event.emailId, entry);
  const next = statusForEvent(event.type);
  if (!next) return { statusChanged: false };
  const statusChanged = await emails.finish(
    event.emailId,
    next,
    event.at,
    next === 'delivered' ? undefined : event.detail,
  );
  return { statusChanged };
}
