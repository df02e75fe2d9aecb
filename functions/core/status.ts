/**
 * Email status rules. A new email is `queued`; it then moves once, forward only, to one of the
 * terminal states. A late or duplicated event can never move it back or sideways.
 *
 *   queued ──► delivered | bounced | failed
 *
 * The repository enforces it where it cannot race: every status change is a write conditional
 * on the status still being queued (see EmailRepository.finish).
 */
export const EMAIL_STATUSES = ['queued', 'delivered', 'bounced', 'failed'] as const;
export type EmailStatus = (typeof EMAIL_STATUSES)[number];
export type TerminalStatus = Exclude<EmailStatus, 'queued'>;

export const isTerminal = (status: EmailStatus): status is TerminalStatus => status !== 'queued';

export const canTransition = (from: EmailStatus, to: EmailStatus): boolean =>
  from === 'queued' && isTerminal(to);

/**
 * What a delivery event says about an email, independent of SES's wording.
 * `sent`: the provider accepted it (and will try to deliver it);
 * `delayed`: delivery is being retried by the provider;
 * `complained`: a recipient marked it as spam (after delivery; it does not change the status).
 */
export type DeliveryEventType = 'sent' | 'delivered' | 'delayed' | 'bounced' | 'complained' | 'failed';

/**
 * Resend's `last_event`, shown beside the spec's `status`: the latest meaningful thing that
 * happened to the email. It never goes back either: a late `delivery_delayed` after `delivered`
 * does not replace it, and a complaint (which follows a delivery) replaces everything.
 *
 *   queued ──► sent ──► delivery_delayed ──► delivered | bounced | failed ──► complained
 */
export const LAST_EVENTS = [
  'queued',
  'sent',
  'delivery_delayed',
  'delivered',
  'bounced',
  'failed',
  'complained',
] as const;
export type LastEvent = (typeof LAST_EVENTS)[number];

/** What the status item records, from which `last_event` follows whatever order events came in. */
export interface EventMarks {
  status: EmailStatus;
  sent: boolean;
  delayed: boolean;
  complained: boolean;
}

export function lastEventOf(marks: EventMarks): LastEvent {
  if (marks.complained) return 'complained';
  if (isTerminal(marks.status)) return marks.status;
  if (marks.delayed) return 'delivery_delayed';
  return marks.sent ? 'sent' : 'queued';
}

/** The status an event moves a queued email to, if any. */
export function statusForEvent(type: DeliveryEventType): TerminalStatus | undefined {
  switch (type) {
    case 'delivered':
      return 'delivered';
    case 'bounced':
      return 'bounced';
    case 'failed':
      return 'failed';
    default:
      return undefined;
  }
}
