/**
 * What an email fanned out from a broadcast tells its broadcast (issue 41): each recipient outcome
 * and engagement, recorded once as it is first recorded on the email (the same "news" the metrics
 * count: metrics/count.ts), so the broadcast's recipients by type, totals and clicked links are
 * served from items written as events arrive, never from a scan. The emails concept raises these;
 * the DynamoDB adapter (adapters/dynamodb/broadcast-tally.ts) keeps them. Never throws into the
 * email's own record: a lost tally is logged and counted (BroadcastTallyLost).
 */

/** Resend's recipient types (`GET /v1/broadcasts/{id}/recipients?type=`), plus what only the totals keep. */
export const BROADCAST_RECIPIENT_TYPES = [
  'sent',
  'delivered',
  'opened',
  'clicked',
  'bounced',
  'complained',
  'unsubscribed',
  'suppressed',
] as const;
export type BroadcastRecipientType = (typeof BROADCAST_RECIPIENT_TYPES)[number];

export interface BroadcastTallyEntry {
  broadcastId: string;
  emailId: string;
  /** The recipient's address, lower-cased (a broadcast email has exactly one). */
  address: string;
  type: BroadcastRecipientType;
  /** When it happened (ISO). */
  at: string;
  /** `bounced`: Resend's bounce type. */
  bounceType?: 'permanent' | 'transient' | 'undetermined';
  /** `clicked`: the link. */
  link?: string;
}

/**
 * `ended`: the email left the lane without reaching SES (withheld by the gate, failed, canceled);
 * with `sent` and `suppressed` it is what says every email of the broadcast is handled.
 */
export interface BroadcastEnded {
  broadcastId: string;
  emailId: string;
  address: string;
  at: string;
  reason: 'failed' | 'canceled' | 'withheld';
}

export interface BroadcastTally {
  /** Records a recipient's outcome or engagement (opened and clicked: each one; the rest once). */
  record(entry: BroadcastTallyEntry): Promise<void>;
  /** Records that an email of the broadcast ended without being sent. */
  ended(entry: BroadcastEnded): Promise<void>;
}
