import { type Suppression, type SuppressionRepository, suppressedReason } from '../suppressions/ports.js';
import type { EmailContent } from './email.js';
import { type EmailFacts, emailEvent } from './events.js';
import {
  addressKey,
  type Recipient,
  recipientsOf,
  type SuppressedReason,
  WITHHELD_REASONS,
} from './recipients.js';

/** Which of an email's recipients are on the suppression list, and why. */
export interface Suppressed {
  /** Their positions among its recipients (to, cc, bcc). */
  positions: number[];
  /** Their addresses, by why each is listed. */
  named: Map<SuppressedReason, string[]>;
  /** Their addresses (as the list keys them). */
  emails: Set<string>;
  /** Their positions, by why each is listed (what the status item records). */
  byReason: Partial<Record<SuppressedReason, number[]>>;
  /** The reasons and addresses, in a line (at most 120 characters). */
  summary: string;
  /** Every recipient is. */
  all: boolean;
}

/** Which of the email's recipients are on the suppression list, and why (one batch read). */
export async function suppressedIn(
  deps: { suppressions?: Pick<SuppressionRepository, 'find'> },
  content: EmailContent,
): Promise<Suppressed> {
  const recipients = recipientsOf(content);
  const found: Map<string, Suppression> = deps.suppressions
    ? await deps.suppressions.find(recipients.map((r) => r.email))
    : new Map();
  return leftOut(recipients, (r) => {
    const entry = found.get(r.email);
    return entry ? suppressedReason(entry.origin) : undefined;
  });
}

/** The recipients left out, by why each is (absent: it is sent to). */
export function leftOut(
  recipients: Recipient[],
  reasonOf: (recipient: Recipient, position: number) => SuppressedReason | undefined,
): Suppressed {
  const positions: number[] = [];
  const byReason: Partial<Record<SuppressedReason, number[]>> = {};
  const named = new Map<SuppressedReason, string[]>();
  const emails = new Set<string>();
  recipients.forEach((r, i) => {
    const reason = reasonOf(r, i);
    if (!reason) return;
    positions.push(i);
    emails.add(r.email);
    byReason[reason] = [...(byReason[reason] ?? []), i];
    const list = named.get(reason) ?? [];
    if (!list.includes(r.email)) list.push(r.email);
    named.set(reason, list);
  });
  const summary = [...named].map(([reason, emails]) => `${reason}: ${emails.join(', ')}`).join('; ');
  return {
    positions,
    named,
    emails,
    byReason,
    summary: summary.length > 120 ? `${summary.slice(0, 117)}...` : summary,
    all: recipients.length > 0 && positions.length === recipients.length,
  };
}

/** The addressed content without these (suppressed) addresses. */
export const without = (content: EmailContent, emails: Set<string>): EmailContent => ({
  ...content,
  to: content.to.filter((a) => !emails.has(addressKey(a))),
  cc: content.cc.filter((a) => !emails.has(addressKey(a))),
  bcc: content.bcc.filter((a) => !emails.has(addressKey(a))),
});

const SUPPRESSED_MESSAGES: Record<SuppressedReason, string> = {
  previous_bounce: 'The address is on the suppression list: an earlier email to it bounced permanently.',
  previous_complaint:
    'The address is on the suppression list: its recipient marked an earlier email as spam.',
  manual: 'The address is on the suppression list: it was added by hand.',
  unsubscribed: "Withheld: the address's contact unsubscribed from every email with a topic.",
  topic_opted_out: "Withheld: the address's contact opted out of the email's topic.",
  topic_default_opt_out:
    "Withheld: the address made no choice for the email's topic, whose default subscription is opt_out.",
  topic_deleted:
    "Withheld: the email's topic no longer exists, so no recipient's choice for it can be known.",
};

/**
 * email.suppressed, one event per reason, naming the recipients left out for it: those on the
 * suppression list. A recipient the send gate withheld (its choice for the email's topic) raises
 * none: Resend's event speaks of the suppression list only; its outcome on the email says why.
 */
export const suppressedEvents = (facts: EmailFacts, named: Map<SuppressedReason, string[]>, at: string) =>
  [...named]
    .filter(([reason]) => !(WITHHELD_REASONS as readonly string[]).includes(reason))
    .map(([reason, emails]) =>
      emailEvent('email.suppressed', at, facts, emails, {
        suppressed: { type: 'Suppressed', reason, message: SUPPRESSED_MESSAGES[reason] },
      }),
    );
