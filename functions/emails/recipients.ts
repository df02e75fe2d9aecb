import type { SuppressedReason as ListedReason } from '../suppressions/ports.js';
import type { EmailContent, EmailEvent } from './content.js';
import { type EmailStatus, type LastEvent, lastEventOf } from './status.js';

/**
 * Per-recipient outcomes. An email's recipients are its `to`, `cc` and `bcc` addresses, in that
 * order; a recipient's position in that list is what the status item counts (see RecipientTally),
 * and what SES's events say about each address is folded into its own status here.
 */
export type RecipientKind = 'to' | 'cc' | 'bcc';

/**
 * `complained` is on top of `delivered` (a complaint follows a delivery). `failed`: SES did not
 * take this recipient's message (an email with topic_id sends one per recipient; deliver-gate.ts),
 * or refused the whole email.
 */
export const RECIPIENT_STATUSES = [
  'queued',
  'delivered',
  'bounced',
  'complained',
  'suppressed',
  'failed',
] as const;
export type RecipientStatus = (typeof RECIPIENT_STATUSES)[number];

/**
 * Why the send gate withheld a recipient of an email with `topic_id` (deliver-gate.ts): its contact
 * unsubscribed from everything; it opted out of the topic; it made no choice (or has no contact) and
 * the topic's default is `opt_out`; the topic no longer exists.
 */
export const WITHHELD_REASONS = [
  'unsubscribed',
  'topic_opted_out',
  'topic_default_opt_out',
  'topic_deleted',
] as const;
export type WithheldReason = (typeof WITHHELD_REASONS)[number];

/** Why a recipient was left out of the send: on the suppression list, or withheld by the gate. */
export type SuppressedReason = ListedReason | WithheldReason;

export interface Recipient {
  email: string;
  kind: RecipientKind;
}

export interface RecipientOutcome extends Recipient {
  status: RecipientStatus;
  last_event: LastEvent;
  /** When its latest news happened (null while it is queued). */
  at: string | null;
  /** What SES (or the suppression list) said: the SMTP answer, the bounce's diagnostic, the reason. */
  detail: string | null;
  bounce?: { type: string; subType: string };
  suppressed?: { reason: SuppressedReason };
}

/** The address part of `Name <addr>`, lower-cased: how one recipient is recognised in any event. */
export const addressKey = (address: string): string =>
  (/<([^>]+)>\s*$/.exec(address)?.[1] ?? address).trim().toLowerCase();

/** The recipients of an email, in position order, as bare addresses. */
export const recipientsOf = (content: Pick<EmailContent, 'to' | 'cc' | 'bcc'>): Recipient[] => [
  ...content.to.map((a) => ({ email: addressKey(a), kind: 'to' as const })),
  ...content.cc.map((a) => ({ email: addressKey(a), kind: 'cc' as const })),
  ...content.bcc.map((a) => ({ email: addressKey(a), kind: 'bcc' as const })),
];

/** The positions of these addresses among the recipients (an address listed twice has two). */
export function positionsOf(recipients: Recipient[], addresses: string[]): number[] {
  const wanted = new Set(addresses.map(addressKey));
  const positions: number[] = [];
  recipients.forEach((r, i) => {
    if (wanted.has(r.email)) positions.push(i);
  });
  return positions;
}

/** An event's weight for a recipient's `last_event` (the weightier news wins, whatever the order). */
const RANK: Record<string, number> = {
  delayed: 2,
  delivered: 3,
  opened: 4,
  clicked: 5,
  bounced: 6,
  failed: 6,
  complained: 7,
};

/**
 * Each recipient's outcome, from the email's events (whatever order they came in). `sent`: SES has
 * the email (every recipient not suppressed was handed to it), at `sentAt`. An open or click moves
 * a recipient's `last_event` (never past a bounce or complaint) and not its status: it is no
 * outcome, only news.
 */
export function recipientOutcomes(
  recipients: Recipient[],
  events: EmailEvent[],
  email: {
    status: EmailStatus;
    sentAt: string | null;
    /** Positions left out of the send as suppressed, with why, and when. */
    suppressed?: Map<number, SuppressedReason>;
    suppressedAt?: string | null;
  },
): RecipientOutcome[] {
  return recipients.map((recipient, position) => {
    const reason = email.suppressed?.get(position);
    if (reason)
      return {
        ...recipient,
        status: 'suppressed',
        last_event: 'suppressed',
        at: email.suppressedAt ?? null,
        detail: reason,
        suppressed: { reason },
      };
    const mine = events.filter((e) => e.recipients.some((r) => addressKey(r) === recipient.email));
    const has = (type: string) => mine.some((e) => e.type === type);
    // Its own message not taken by SES (or the whole email refused): failed, whatever the email.
    const failed = has('failed');
    const marks = {
      status: (email.status === 'failed' || failed ? 'failed' : 'queued') as EmailStatus,
      sent: Boolean(email.sentAt),
      delayed: has('delayed'),
      delivered: has('delivered') || has('complained'),
      bounced: has('bounced'),
      complained: has('complained'),
      opened: has('opened'),
      clicked: has('clicked'),
    };
    const status: RecipientStatus = marks.bounced
      ? 'bounced'
      : marks.complained
        ? 'complained'
        : marks.delivered
          ? 'delivered'
          : failed
            ? 'failed'
            : 'queued';
    // The event behind its latest news: the weightiest, and of those the latest.
    const latest = mine.reduce<EmailEvent | undefined>((best, e) => {
      const rank = RANK[e.type] ?? 0;
      const bestRank = best ? (RANK[best.type] ?? 0) : -1;
      return rank > bestRank || (rank === bestRank && best && e.at > best.at) ? e : best;
    }, undefined);
    const bounce = mine.find((e) => e.type === 'bounced' && e.bounce)?.bounce;
    return {
      ...recipient,
      status,
      last_event: lastEventOf(marks),
      at: latest?.at ?? (marks.sent ? email.sentAt : null),
      detail: latest?.detail ?? null,
      ...(bounce ? { bounce } : {}),
    };
  });
}
