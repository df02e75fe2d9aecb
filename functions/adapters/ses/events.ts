import { automatedReason, secondsBetween } from '../../emails/engagement.js';
import type { EmailSource } from '../../emails/events.js';
import type { DeliveryEvent } from '../../emails/record-event.js';
import { isEmailId } from '../../shared/ids.js';
import { BROADCAST_ID_TAG, EMAIL_ID_TAG, TEMPLATE_ID_TAG } from './mailer.js';

/**
 * SES event publishing records (configuration set → SNS with raw delivery → SQS), as documented in
 * "Examples of event data that Amazon SES publishes". Only the fields we read are typed.
 */
export interface SesEvent {
  eventType?: string;
  /** Older notification format uses notificationType instead of eventType. */
  notificationType?: string;
  mail: {
    timestamp: string;
    messageId: string;
    source?: string;
    destination?: string[];
    commonHeaders?: { from?: string[]; to?: string[]; subject?: string };
    tags?: Record<string, string[]>;
  };
  delivery?: { timestamp: string; recipients: string[]; smtpResponse?: string };
  bounce?: {
    timestamp: string;
    bounceType: 'Permanent' | 'Transient' | 'Undetermined';
    bounceSubType: string;
    bouncedRecipients: { emailAddress: string; action?: string; status?: string; diagnosticCode?: string }[];
  };
  complaint?: {
    timestamp: string;
    complainedRecipients: { emailAddress: string }[];
    complaintFeedbackType?: string;
  };
  reject?: { reason: string };
  renderingFailure?: { errorMessage: string; templateName?: string };
  deliveryDelay?: { timestamp: string; delayType: string; delayedRecipients: { emailAddress: string }[] };
  /** Sent with open tracking on, when the pixel was fetched. */
  open?: { ipAddress: string; timestamp: string; userAgent: string };
  /** Sent with click tracking on, when a rewritten link was followed. */
  click?: {
    ipAddress: string;
    link: string;
    linkTags?: Record<string, string[]>;
    timestamp: string;
    userAgent: string;
  };
}

/**
 * The SES event in an SQS message's body: SNS with raw message delivery puts the event there as
 * it is; with raw delivery off, it is the `Message` of an SNS notification envelope. Throws when
 * the body is not JSON.
 */
export function parseSesEventBody(body: string): SesEvent {
  const parsed = JSON.parse(body);
  return parsed?.Type === 'Notification' && typeof parsed.Message === 'string'
    ? JSON.parse(parsed.Message)
    : parsed;
}

/**
 * Translates one SES event into our delivery event, or undefined when it is not about one of our
 * emails (no email_id tag) or is a type we do not track (Subscription). `Send` is
 * tracked: it is SES's own word that it accepted the email, which settles an attempt whose worker
 * died or timed out after SES took it.
 * A bounce of any type is a final outcome for its recipients: SES has given up on them (a Transient
 * bounce is reported only after SES's own retries stopped). Only a Permanent one (which includes
 * `OnAccountSuppressionList`) puts the address on the suppression list (record-event.ts).
 * `Open` and `Click` name no recipient: SES sends one message to all of an email's recipients, so
 * one pixel and one set of links serve them all, and the event concerns every destination of the
 * message (for the usual one-recipient email, its recipient). Each is flagged `automated` when its
 * user agent or its haste says a machine made it (engagement.ts).
 */
export function fromSesEvent(event: SesEvent): DeliveryEvent | undefined {
  const emailId = event.mail?.tags?.[EMAIL_ID_TAG]?.[0];
  if (!emailId || !isEmailId(emailId)) return undefined;
  const base = {
    emailId,
    sent: { at: event.mail.timestamp, providerMessageId: event.mail.messageId },
    email: sourceOfEvent(event),
  };
  switch (event.eventType ?? event.notificationType) {
    case 'Send':
      return { ...base, type: 'sent', at: event.mail.timestamp, recipients: event.mail.destination ?? [] };
    case 'Delivery':
      return {
        ...base,
        type: 'delivered',
        at: event.delivery?.timestamp ?? event.mail.timestamp,
        recipients: event.delivery?.recipients ?? [],
        ...(event.delivery?.smtpResponse ? { detail: event.delivery.smtpResponse } : {}),
      };
    case 'Bounce': {
      const bounce = event.bounce;
      const first = bounce?.bouncedRecipients[0];
      return {
        ...base,
        type: 'bounced',
        at: bounce?.timestamp ?? event.mail.timestamp,
        recipients: bounce?.bouncedRecipients.map((r) => r.emailAddress) ?? [],
        detail: [bounce?.bounceType, bounce?.bounceSubType, first?.diagnosticCode].filter(Boolean).join(': '),
        ...(bounce ? { bounce: { type: bounce.bounceType, subType: bounce.bounceSubType } } : {}),
      };
    }
    case 'Complaint':
      return {
        ...base,
        type: 'complained',
        at: event.complaint?.timestamp ?? event.mail.timestamp,
        recipients: event.complaint?.complainedRecipients.map((r) => r.emailAddress) ?? [],
        ...(event.complaint?.complaintFeedbackType ? { detail: event.complaint.complaintFeedbackType } : {}),
      };
    case 'DeliveryDelay':
      return {
        ...base,
        type: 'delayed',
        at: event.deliveryDelay?.timestamp ?? event.mail.timestamp,
        recipients: event.deliveryDelay?.delayedRecipients.map((r) => r.emailAddress) ?? [],
        ...(event.deliveryDelay?.delayType ? { detail: event.deliveryDelay.delayType } : {}),
      };
    case 'Reject':
      return {
        ...base,
        type: 'failed',
        at: event.mail.timestamp,
        recipients: [],
        detail: `Rejected by SES: ${event.reject?.reason ?? 'unknown reason'}`,
      };
    case 'Rendering Failure':
    case 'RenderingFailure':
      return {
        ...base,
        type: 'failed',
        at: event.mail.timestamp,
        recipients: [],
        detail: `Rendering failure: ${event.renderingFailure?.errorMessage ?? 'unknown'}`,
      };
    case 'Open':
    case 'Click': {
      const click = (event.eventType ?? event.notificationType) === 'Click';
      const what = click ? event.click : event.open;
      if (!what) return undefined;
      const at = what.timestamp ?? event.mail.timestamp;
      const automated = automatedReason(what.userAgent, secondsBetween(event.mail.timestamp, at));
      return {
        ...base,
        type: click ? 'clicked' : 'opened',
        at,
        recipients: event.mail.destination ?? [],
        engagement: {
          ipAddress: what.ipAddress ?? '',
          userAgent: what.userAgent ?? '',
          timestamp: at,
          ...(click ? { link: event.click?.link ?? '' } : {}),
        },
        ...(automated ? { automated } : {}),
      };
    }
    default:
      return undefined;
  }
}

/**
 * What the event says of its email (emails/events.ts builds its webhooks' facts from it): the
 * sender as sent, the subject, the user's tags (SES's own `ses:` tags and our email and template
 * id tags left out), the template.
 */
function sourceOfEvent(event: SesEvent): EmailSource {
  const headers = event.mail.commonHeaders;
  const tags: Record<string, string> = {};
  for (const [name, values] of Object.entries(event.mail.tags ?? {}))
    if (
      !name.startsWith('ses:') &&
      name !== EMAIL_ID_TAG &&
      name !== TEMPLATE_ID_TAG &&
      name !== BROADCAST_ID_TAG &&
      values[0] !== undefined
    )
      tags[name] = values[0];
  const template = event.mail.tags?.[TEMPLATE_ID_TAG]?.[0];
  const broadcast = event.mail.tags?.[BROADCAST_ID_TAG]?.[0];
  return {
    from: headers?.from?.[0] ?? event.mail.source ?? '',
    subject: headers?.subject ?? '',
    tags,
    ...(template ? { template_id: template } : {}),
    ...(broadcast ? { broadcast_id: broadcast } : {}),
  };
}
