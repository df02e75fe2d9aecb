/**
 * A broadcast (issue 41): one message to a segment, each contact getting its own email rendered
 * for it (merge tags, its own unsubscribe link), fanned out off the request path, sent through a
 * lane of its own behind transactional mail. Types only: what the API, the fan-out, the tally and
 * the console share.
 *
 * Statuses (ours; SDK 6.38 types `draft | queued | sent`, so `scheduled`, `sending` and `canceled`
 * are ours beside Resend's, as its dashboard shows them):
 * - `draft`: editable (PATCH), deletable; nothing sent.
 * - `scheduled`: sent later (`scheduled_at`); DELETE or `/cancel` cancels it.
 * - `queued`: accepted for sending, its fan-out not begun, or waiting (`waiting`: SES's 24-hour
 *   quota, or sending paused) before it may go on.
 * - `sending`: fan-out under way, or its emails still in the lane.
 * - `sent`: every contact's email made, and every one handed to SES or ended (`sent_at`).
 * - `canceled`: `/cancel` (or DELETE of a scheduled one): no email not yet handed to SES is sent.
 */
export const BROADCAST_STATUSES = ['draft', 'scheduled', 'queued', 'sending', 'sent', 'canceled'] as const;
export type BroadcastStatus = (typeof BROADCAST_STATUSES)[number];

/** What a broadcast says, as created and edited (Resend's fields). */
export interface BroadcastContent {
  name: string | null;
  segment_id: string | null;
  from: string;
  subject: string;
  reply_to: string[];
  preview_text: string | null;
  html: string | null;
  text: string | null;
  topic_id: string | null;
}

/** A broadcast as stored (adapters/dynamodb/broadcast-store.ts; the fan-out's progress beside it). */
export interface Broadcast extends BroadcastContent {
  /** A UUIDv7 (shared/ids.ts newUuid), as Resend's ids are UUIDs. */
  id: string;
  status: BroadcastStatus;
  created_at: string;
  /** When it is (or was) to be sent, ISO; null when sent at once or a draft. */
  scheduled_at: string | null;
  /** When its sending began (the send's time, or its schedule's when it fell due); null before. */
  sent_at: string | null;
  /**
   * Each send (and each cancel) adds one: a fan-out message carries the generation it was queued
   * for and does nothing when the broadcast has moved on (sent again after a cancel, rescheduled).
   */
  generation: number;
  /** Why a queued or sending broadcast does not go on now (absent: nothing holds it). */
  waiting?: { reason: 'quota' | 'paused'; detail: string; since: string };
  /** The fan-out's progress (absent until it begins): the fan-out worker alone writes it. */
  fanout?: FanOutProgress;
}

/**
 * How far the fan-out has come. A page is taken from `cursor` (the last contact id done, in the
 * segment's sorted merge), its emails' ids made from `page_at` (so a page redone after a crash makes
 * the same ids: one email per contact, never two) and the checkpoint moved in one conditional write.
 */
export interface FanOutProgress {
  /** The last contact id whose email is made; null before the first. */
  cursor: string | null;
  /** The time (ms) the page after `cursor` began: its emails' ids carry it. */
  page_at: number;
  /** Members who joined the segment after this moment (ms) are not sent to. */
  members_before: number;
  /** Emails made (one per contact sent to). */
  created: number;
  /** Contacts not sent to, by why: globally unsubscribed, opted out of the topic (or its default). */
  skipped: { unsubscribed: number; opted_out: number };
  /** True once every page is done (the broadcast is `sent` once every email is handled too). */
  done: boolean;
}

/** A broadcast's totals (sharded counters, summed at read: adapters/dynamodb/broadcast-tally.ts). */
export interface BroadcastTotals {
  sent: number;
  delivered: number;
  opened: number;
  unique_opened: number;
  clicked: number;
  unique_clicked: number;
  bounced: number;
  complained: number;
  unsubscribed: number;
  suppressed: number;
  /** Emails that left the lane without reaching SES: withheld by the gate, failed, canceled. */
  ended: number;
}

/** Reads a broadcast's totals (the fan-out's "is every email handled?", the API's and console's counts). */
export interface BroadcastTotalsReader {
  totals(broadcastId: string): Promise<BroadcastTotals>;
}
