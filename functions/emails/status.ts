/**
 * Email status rules. A new email is `queued`; it then moves once, forward only, to one of the
 * terminal states. A late or duplicated event can never move it back or sideways.
 *
 *   queued ──► delivered | bounced | failed
 *
 * Every change is a transition of the email's lifecycle (lifecycle.ts), which the repository
 * writes conditionally, so it cannot race: each final transition requires the email still queued.
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
 * `complained`: a recipient marked it as spam (after delivery; it does not change the status);
 * `opened`, `clicked`: a recipient (or a machine on their behalf: see engagement.ts) opened it or
 * followed one of its links; neither ever changes the status.
 */
export type DeliveryEventType =
  | 'sent'
  | 'delivered'
  | 'delayed'
  | 'bounced'
  | 'complained'
  | 'failed'
  | 'opened'
  | 'clicked';

/**
 * Resend's `last_event`, shown beside the spec's `status`: the latest meaningful news about the
 * email. It is read from marks that only ever get set, so the same events in any order, duplicated
 * or late, give the same `last_event`; where two kinds of news are both true, the weightier wins
 * (a bounce over a delivery, a complaint over everything; a late `delivery_delayed` never replaces
 * `delivered`, a late delivery never replaces `opened`).
 *
 *   queued | scheduled ──► suppressed ──► sent ──► delivery_delayed ──► delivered ──► opened ──► clicked
 *       ──► bounced ──► complained
 *                         (canceled: a scheduled email canceled; failed: SES refused the email)
 *
 * `suppressed` is the latest news only while nothing went to SES (every recipient, or all before
 * the send): once the others are sent, their news follows. Opens and clicks outweigh the good news
 * only: where the news without them is `bounced`, `failed`, `suppressed`, `canceled` or
 * `complained`, it stays that, whatever opens and clicks come, in whatever order.
 */
export const LAST_EVENTS = [
  'queued',
  'scheduled',
  'canceled',
  'suppressed',
  'sent',
  'delivery_delayed',
  'delivered',
  'opened',
  'clicked',
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
  /** At least one recipient was delivered (absent on emails recorded before per-recipient outcomes). */
  delivered?: boolean;
  /** At least one recipient bounced (SES's Bounce event). */
  bounced?: boolean;
  /** At least one recipient was left out because it is on the suppression list. */
  suppressed?: boolean;
  /** It was accepted with a `scheduled_at` (its news is `scheduled` until it is sent or ends). */
  scheduled?: boolean;
  /** A scheduled email canceled before it was sent. */
  canceled?: boolean;
  /** SES reported an open (a reader's or a machine's: engagement.ts). */
  opened?: boolean;
  /** SES reported a click on one of its links. */
  clicked?: boolean;
}

export function lastEventOf(marks: EventMarks): LastEvent {
  const news = withoutEngagement(marks);
  if (FINAL_NEWS.has(news)) return news;
  if (marks.clicked) return 'clicked';
  if (marks.opened) return 'opened';
  return news;
}

/** News that opens and clicks never replace. */
const FINAL_NEWS: ReadonlySet<LastEvent> = new Set([
  'bounced',
  'failed',
  'suppressed',
  'canceled',
  'complained',
]);

function withoutEngagement(marks: EventMarks): LastEvent {
  if (marks.complained) return 'complained';
  if (marks.canceled) return 'canceled';
  if (marks.status === 'failed') return 'failed';
  if (marks.bounced) return 'bounced';
  if (marks.delivered) return 'delivered';
  if (marks.suppressed && !marks.sent) return 'suppressed';
  if (isTerminal(marks.status)) return marks.status;
  if (marks.delayed) return 'delivery_delayed';
  if (marks.sent) return 'sent';
  return marks.suppressed ? 'suppressed' : marks.scheduled ? 'scheduled' : 'queued';
}

/**
 * What an email's status item counts of its recipients (positions in its to, cc, bcc order, kept
 * as sets so a duplicated event counts once): how many there are, how many have a final outcome,
 * and how many of those did not get the email (bounced or suppressed).
 */
export interface RecipientTally {
  total: number;
  done: number;
  lost: number;
}

/**
 * The email's status once every recipient has a final outcome: `bounced` when at least one did not
 * get it (bounced or suppressed), `delivered` when all did; undefined while some are still open.
 * (`failed` is for SES refusing the whole email, which is not a per-recipient outcome.)
 */
export function settledStatus(tally: RecipientTally): 'delivered' | 'bounced' | undefined {
  if (tally.total <= 0 || tally.done < tally.total) return undefined;
  return tally.lost > 0 ? 'bounced' : 'delivered';
}

/** The failure reason of an email settled `bounced` with several recipients. */
export const lostReason = (tally: RecipientTally): string =>
  `did not reach ${tally.lost} of ${tally.total} recipients (bounced or suppressed; see recipients)`;

/**
 * How an email SES said nothing more about, long after it stopped trying, settles from what is
 * known: `bounced` if a recipient is known not to have it, `delivered` if some are known to have
 * it and none known not to, `failed` when nothing is known; the reason says which are unknown.
 */
export function settleUnreported(
  tally: RecipientTally,
  waited: string,
): { status: TerminalStatus; reason: string } {
  const unknown = Math.max(0, tally.total - tally.done);
  if (tally.done === 0)
    return {
      status: 'failed',
      reason: `SES reported no delivery or bounce within ${waited} of sending; whether it arrived is unknown`,
    };
  const silent = `SES reported nothing about ${unknown} of ${tally.total} recipients within ${waited} of sending; whether they got it is unknown`;
  return tally.lost > 0
    ? { status: 'bounced', reason: `${lostReason(tally)}; ${silent}` }
    : { status: 'delivered', reason: `delivered to ${tally.done} of ${tally.total} recipients; ${silent}` };
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
