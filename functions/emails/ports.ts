import type { SenderOptions } from '../domains/model.js';
import type { StoredAttachment } from './attachments.js';
import type { EmailContent, EmailDetail, EmailEvent, EmailSummary } from './email.js';
import type { IdempotencyBegin, StoredResponse } from './idempotency.js';
import type { EmailState, FinalTransition } from './lifecycle.js';
import type { ListEmailsQuery } from './list-query.js';
import type { SuppressedReason } from './recipients.js';
import type { EmailStatus, RecipientTally, TerminalStatus } from './status.js';

export interface NewEmail {
  id: string;
  created_at: string;
  content: EmailContent;
  /** A scheduled email: when it is due (ISO UTC), the key that scheduled it, and whether the send path queues it itself. */
  schedule?: { at: string; key_id: string; dispatched: boolean };
}

export type ClaimResult =
  /** This worker may hand the email to the provider now; the attempt is recorded as begun. */
  | 'claimed'
  /**
   * The same, and this claim is the first to record the recipients left out as suppressed (an
   * earlier claim released after a throttle recorded none): what is counted and raised once.
   */
  | 'claimed_suppressed'
  /** Already sent, or already in a final state: nothing to do. */
  | 'done'
  /** A scheduled email whose time has not come (it was moved later): the scheduler queues it then. */
  | 'not_due'
  /**
   * An attempt already began (another worker, or one that died) and its outcome is not known yet:
   * never start another. The provider's send event, or the sweeper, settles it.
   */
  | 'in_progress'
  /** No such email. */
  | 'missing';

export type { EmailState } from './lifecycle.js';

/**
 * One claim, told apart from every other: when it began (`send_started_at`) and its random mark.
 * A message carries it (`QueuedJob.unreleased`) when SES answered that claim's call without taking
 * the email but the claim could not be released: the message may release exactly that claim.
 */
export interface StandingClaim {
  started_at: number;
  mark: string;
}

export interface ClaimOptions {
  /** This claim's own mark (absent: a random one): what a StandingClaim names it by. */
  mark?: string;
}

/**
 * Recipients (positions in to, cc, bcc order) left out of the send because they are on the
 * suppression list, by reason, and when: recorded in the same write as the claim (or the final
 * status), so they are visible exactly when that write is.
 */
export interface SuppressedRecipients {
  byReason: Partial<Record<SuppressedReason, number[]>>;
  at: string;
}

export const suppressedPositions = (s: SuppressedRecipients): number[] =>
  Object.values(s.byReason).flatMap((positions) => positions ?? []);

/** The news markSent may record with the send: flags on the status item `last_event` reads. */
export type SentMark = 'delayed' | 'complained' | 'opened' | 'clicked';

/** What one provider event says about some of an email's recipients (see settleRecipients). */
export interface RecipientNews {
  /** The addresses the event concerns, as the provider wrote them. */
  addresses: string[];
  /** `failed`: SES did not take the recipient's own message (an email with topic_id; deliver-unsent.ts). */
  outcome: 'delivered' | 'bounced' | 'complained' | 'failed';
  at: string;
  /** The failure reason, should this news settle the email `bounced`. */
  reason?: string;
  sent: { at: string; providerMessageId: string };
  /** The provider event the news comes from, recorded as one of the email's events. */
  event: EmailEvent;
}

export interface FinishOptions {
  /**
   * Which of the lifecycle's final transitions this is (emails/lifecycle.ts), and so what must hold
   * for it besides the email still being queued. @default 'settleEvent'
   */
  as?: FinalTransition;
  /** The attempt a `failAttempt` concerns (when it began, as the claim recorded it). */
  attemptStartedAt?: number;
  reason?: string;
  /** What an event of the provider says about the send, filled in when the email has none yet. */
  sent?: { at: string; providerMessageId: string };
  /** Recipients settled by this change as suppressed (when every one of them is). */
  suppressed?: SuppressedRecipients;
  /** Marked canceled, as a `cancel` is (an email of a canceled broadcast, ended unsent). */
  canceled?: true;
}

export interface EmailRepository {
  /** Stores a new queued email (status, summary and bodies). */
  create(email: NewEmail): Promise<void>;
  /**
   * Stores new queued emails: every summary and body first, then the status items, so an email is
   * visible only once all of it is stored; all in batch writes, for fresh ids. With `mayExist`
   * (ids a request that died may have used), a status item is never written over an existing one:
   * those emails are returned as `existing`, left as they are.
   */
  createMany(emails: NewEmail[], options?: { mayExist?: boolean }): Promise<{ existing: string[] }>;
  /** The status items of these emails (missing ones left out), read consistently, 100 a read. */
  states(ids: string[]): Promise<EmailState[]>;
  get(id: string): Promise<EmailDetail | null>;
  /** The email's addressed content as stored (its bodies may be only a `body_key`); null: no such email. */
  getContent(id: string): Promise<EmailContent | null>;
  /** The email's attachment records (none: []); null when there is no such email. */
  getAttachments(id: string): Promise<StoredAttachment[] | null>;
  /** The status item alone (one GetItem): what resuming a request or the sweeper needs. */
  getState(id: string): Promise<EmailState | null>;
  list(query: ListEmailsQuery): Promise<EmailPage>;
  /**
   * Records that an attempt to hand the email to the provider begins now, if none began before and
   * it is queued and not sent. The record does not expire: a second attempt is never started while
   * the first one's outcome is unknown (see docs/guarantees.md, "At most once to SES, nothing stranded").
   */
  claim(
    id: string,
    nowMs: number,
    suppressed?: SuppressedRecipients,
    options?: ClaimOptions,
  ): Promise<ClaimResult>;
  /** Undoes a claim after the provider refused the email without taking it (safe to try again). */
  release(id: string, startedAtMs: number, nowMs: number): Promise<void>;
  /**
   * The same, by the message that carries a claim whose release failed (QueuedJob.unreleased):
   * only while that very claim (its time and mark) is on record. True when it released it.
   */
  releaseStanding(id: string, claim: StandingClaim, nowMs: number): Promise<boolean>;
  /**
   * Records that an unclaimed email was put back on the queue for later because SES takes nothing
   * now (a spent quota, sending paused), so the sweeper does not take it for stranded meanwhile.
   */
  markDeferred(id: string, nowMs: number): Promise<void>;
  /**
   * Records that the provider accepted the email (keeps the first record when there are two), and
   * with `mark`, that it reported a delivery delay, a complaint, an open or a click (what
   * `last_event` follows; never the status). True when this call recorded it first (the consumer
   * or the Send event).
   */
  markSent(id: string, providerMessageId: string, at: string, mark?: SentMark): Promise<boolean>;
  /**
   * markSent, saying also what this write recorded for the first time (what the metrics count):
   * `first` as markSent answers (the send is news: raised as email.sent, counted as sent);
   * `newMark`: the mark was not set before it.
   */
  recordSent(id: string, providerMessageId: string, at: string, mark?: SentMark): Promise<SentNews>;
  /** Records why an attempt's outcome is unknown; the attempt stays on record. */
  markUnknown(id: string, reason: string): Promise<void>;
  /**
   * Moves a scheduled email to `scheduledAt` while it still waits (queued, never claimed, not
   * sent, not canceled); `dispatched`: the caller queues it itself for that time. False otherwise.
   * `unmark`: the send path takes back its own queued mark at the email's own time (its queue
   * refused): no expiry moves, so its search items are not read (the send functions may not Query).
   */
  reschedule(
    id: string,
    scheduledAt: string,
    dispatched: boolean,
    options?: { unmark?: boolean },
  ): Promise<boolean>;
  /** Moves a queued email to a final status; false when the lifecycle does not allow it (options.as). */
  finish(id: string, status: TerminalStatus, at: string, options?: FinishOptions): Promise<boolean>;
  /** Appends a delivery event (idempotent for a repeated event): true when it was not stored before. */
  addEvent(id: string, event: EmailEvent): Promise<boolean>;
  /**
   * Records final outcomes of the recipients an event concerns, each counted once however often
   * the event comes (their positions are kept as sets on the status item), and the event itself
   * (idempotent, as addEvent). A one-recipient email still queued is settled in the same write
   * (`changed`), its event with it; otherwise the answer is the tally after the change, from which
   * the caller settles the email. Null when there is no such email.
   */
  settleRecipients(
    id: string,
    news: RecipientNews,
  ): Promise<{
    status: EmailStatus;
    tally: RecipientTally;
    changed: boolean;
    /** The outcome flags (delivered, bounced, complained) this write set on the email first. */
    newly: RecipientOutcomeFlag[];
  } | null>;
}

/** What a send record changed for the first time (EmailRepository.recordSent). */
export interface SentNews {
  first: boolean;
  newMark: boolean;
}

/** The flags on an email that say some recipient got it, bounced or complained. */
export type RecipientOutcomeFlag = 'delivered' | 'bounced' | 'complained';

/** What the sweeper reads and changes, besides EmailRepository (see sweep.ts and scheduler.ts). */
export interface SweepStore {
  /**
   * Ids of queued emails from `fromId` (inclusive) to `toId` (exclusive), oldest first, read from
   * the index of queued emails; at most `limit`.
   */
  queuedIds(fromId: string, toId: string, limit: number): Promise<string[]>;
  /** Status items of these emails (missing ones are left out). */
  states(ids: string[]): Promise<EmailState[]>;
  /** The addressed content of a stored email (to queue it again); null when it is gone. */
  content(id: string): Promise<EmailContent | null>;
  /**
   * Marks a queued, unsent email with no attempt under way as re-queued now, unless it was
   * re-queued after `notSinceMs`; false when it may not be re-queued.
   */
  markRequeued(id: string, nowMs: number, notSinceMs: number): Promise<boolean>;
  /** The sweeper's own bookkeeping: where the next scan of queued emails starts, and when old ones were last looked at. */
  progress(): Promise<SweepProgress>;
  /** Saves it if nobody changed it since `read` (a rewind, another run); false when it was left as it is. */
  saveProgress(progress: SweepProgress, read: SweepProgress): Promise<boolean>;
  /**
   * Moves the start of the next scan back to this email, if it is past it: an email stored under
   * an id older than the sweeper's progress (a resumed request) would otherwise never be looked at.
   */
  rewind(emailId: string): Promise<void>;
  /** The due index's partitions (its shards, and the unsharded one of earlier versions). */
  duePartitions(): string[];
  /**
   * Scheduled emails in one partition of the due index with sort keys (`<scheduled_at>#<id>`) from
   * `fromSk` to `toSk` (both inclusive), earliest first; at most `limit`.
   */
  dueIn(partition: string, fromSk: string, toSk: string, limit: number): Promise<DueEntry[]>;
  /** The scheduler's cursors, by due index partition (absent: not read yet). */
  scheduleProgress(): Promise<Map<string, ScheduleCursor>>;
  saveScheduleProgress(partition: string, cursor: ScheduleCursor): Promise<void>;
  /**
   * Records that a scheduled email was put on the queue for its time `scheduledAt` (and when, as a
   * re-queue), if it is still waiting for that time; false when it moved or was claimed, sent or ended.
   */
  markDispatched(id: string, scheduledAt: string, nowMs: number): Promise<boolean>;
  /** Takes an email that is sent or final off the due index (where a write that ended it left it). */
  unindexDue(id: string): Promise<void>;
}

/** An entry of the due index: the email, and its sort key (its time, then its id). */
export interface DueEntry {
  id: string;
  sk: string;
}

/** Where the scheduler is in one partition of the due index (sort keys; '' is the start). */
export interface ScheduleCursor {
  /** Every entry before it was queued at least once: dispatching reads from here. */
  frontier: string;
  /** Where the watch of those entries (lost messages, unknown outcomes) goes on. */
  watchFrom: string;
}

export interface SweepProgress {
  /**
   * Where the scan of queued emails goes on. Every queued email before it, and before
   * `unresolvedFromId`, is known to be sent or final.
   */
  fromId: string;
  /**
   * The oldest email the pass under way found still open (absent: none): the pass starts again
   * from it once it reaches the newest, so one open email never holds up the scan of the others.
   */
  unresolvedFromId?: string;
  /** When a pass through the emails waiting longest for their final events last ended (epoch ms). */
  oldCheckedAtMs: number;
  /** Where the pass under way goes on (FIRST_EMAIL_ID: none is under way). */
  oldFromId: string;
}

/**
 * What goes on the send queue: the email's addressed content, with references to what is large (a
 * body in the content store, attachments). A large job travels as a reference alone (send-job.ts).
 */
export interface SendJob {
  id: string;
  content: EmailContent;
  /** Put back by the sweeper (see QueuedJob.requeued). */
  requeued?: boolean;
}

/**
 * A scheduled email on its way to the queue: a reference (the consumer reads its content and
 * state), the key that scheduled it (checked before sending), and how long the queue holds it.
 */
export interface DueJob {
  id: string;
  content: null;
  key_id?: string;
  delaySeconds: number;
}

/** A job as it comes off the queue: its content, or null when it must be read back from the table. */
export interface QueuedJob {
  id: string;
  content: EmailContent | null;
  /** Set on a scheduled email: the key that scheduled it, which must still exist when it is sent. */
  key_id?: string;
  /**
   * Set on a job put back for later (a throttle, a spent quota, the schedule full): the attempts
   * its earlier messages used (their receives), since SQS counts this message's from zero, and
   * how often SES throttled it (its backoff grows with it).
   */
  attempts?: number;
  throttles?: number;
  /**
   * Set on a job put back after SES answered its claim's call without taking the email (a throttle,
   * a spent quota, paused sending, a refusal) when that claim could not be released: the claim,
   * which the next receive releases first (releaseStanding) instead of taking it for an attempt
   * under way.
   */
  unreleased?: StandingClaim;
  /**
   * Set on a job the sweeper put back: it may duplicate a message still queued, so the consumer
   * reads the email's state before it books a slot of the send schedule for it.
   */
  requeued?: boolean;
}

/** A job put back on the queue for later, as a new message (not counted as an attempt). */
export interface DeferredJob extends QueuedJob {
  delaySeconds: number;
}

/** A file as handed to the provider. */
export interface OutgoingFile {
  filename: string;
  content_type: string;
  disposition: 'attachment' | 'inline';
  content_id: string | null;
  bytes: Uint8Array;
}

export interface EmailQueue {
  enqueue(job: SendJob | DueJob | DeferredJob): Promise<void>;
  /** Queues several jobs in batches; resolves with the ids of those the queue did not take. */
  enqueueMany(jobs: (SendJob | DueJob | DeferredJob)[]): Promise<string[]>;
  /** Messages waiting, delayed or in flight (a backlog); an approximation, as SQS reports it. */
  backlog(): Promise<number>;
}

/** The send queue's dead-letter queue, as the sweeper reads it (without deleting: operators inspect it). */
export interface DeadLetters {
  /** Jobs (or unreadable bodies) of messages there; each is hidden from the next reads for hours. */
  receive(max: number): Promise<{ job?: QueuedJob; messageId: string }[]>;
}

/**
 * What a provider's answer (or its absence) means for an email:
 * `rejected`: refused for good (it will never take this email);
 * `refused`: refused for now, and it did not take it (access denied, no credentials): safe to try
 *   again later, and it counts as an attempt;
 * `unreached`: it never got the request (no connection, or its TCP connect or TLS handshake failed
 *   before a byte of the request was sent): safe to try again at once, and it counts as an attempt;
 * `rate`, `quota`, `paused`: the account's limits (its send rate, its 24-hour quota, sending
 *   paused) refused it; it did not take it. These are not attempts: the email waits for SES;
 * `unknown`: it may have taken it (a timeout after the request was sent, a 5xx, a broken answer): never try again blindly.
 */
export type MailerErrorKind = 'rejected' | 'refused' | 'unreached' | 'rate' | 'quota' | 'paused' | 'unknown';

export class MailerError extends Error {
  constructor(
    message: string,
    readonly kind: MailerErrorKind,
    readonly code: string,
  ) {
    super(message);
    this.name = 'MailerError';
  }
}

export interface Mailer {
  /**
   * Hands the email to the provider, with its files; resolves with the provider's message id, or
   * throws MailerError. The job's bodies are in its content (never only a `body_key`). With `raw`
   * (an SMTP email, content.ts `mime`): that message is sent as it is, to the content's recipients,
   * and its bodies and files are not read.
   */
  send(
    job: SendJob & { files?: OutgoingFile[]; sender?: SenderOptions; raw?: Uint8Array },
  ): Promise<{ messageId: string }>;
  /**
   * Closes the connections kept for the next sends: called before the invocation returns, so none
   * survives a freeze (a stale one would make a send SES never saw look unknown).
   */
  closeIdle?(): void;
}

export interface IdempotencyStore {
  begin(
    scope: string,
    keyHash: string,
    fingerprint: string,
    emailId: string,
    nowMs: number,
  ): Promise<IdempotencyBegin>;
  /** Stores the answer, if the key is still held for this email; false when it is not. */
  complete(scope: string, keyHash: string, emailId: string, response: StoredResponse): Promise<boolean>;
  /** Gives the key back after a failure, so a retry starts afresh. */
  abandon(scope: string, keyHash: string, emailId: string): Promise<void>;
}

/**
 * A page of emails. `scanned_to` (ours): a search combining filters read as far as it may for one
 * page (adapters/dynamodb/email-search.ts) and stopped at this id; the next page starts there.
 */
export interface EmailPage {
  data: EmailSummary[];
  has_more: boolean;
  scanned_to?: string;
}
