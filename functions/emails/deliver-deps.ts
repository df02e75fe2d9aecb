import type { ApiKeyRepository } from '../api-keys/ports.js';
import type { SenderOptions } from '../domains/model.js';
import type { MetricsCounter } from '../metrics/ports.js';
import { type DeferReason, type DeferTimings, deferDelayMs, type SendingLimits } from '../shared/pacing.js';
import type { Clock, ContentStore, Counters, FileFetcher, Log, SendPacer } from '../shared/ports.js';
import type { SuppressionRepository } from '../suppressions/ports.js';
import type { EventPublisher } from '../webhooks/ports.js';
import type { BroadcastStates } from './broadcast-lane.js';
import type { BroadcastTally } from './broadcast-tally.js';
import type { GateDeps } from './deliver-gate.js';
import type { Suppressed } from './deliver-suppressed.js';
import type { EmailRepository, Mailer, QueuedJob, SendJob, StandingClaim } from './ports.js';

/** `audience` and `unsubscribeLinks` (GateDeps): read only for an email with `topic_id`. */
export interface DeliverDeps extends GateDeps {
  emails: EmailRepository;
  /** The API keys, for a scheduled email: it is sent only while the key that scheduled it works. */
  apiKeys?: Pick<ApiKeyRepository, 'getById' | 'findByHash'>;
  mailer: Mailer;
  /**
   * How SES sends from the email's domain (its tracking, its own configuration set), by sender
   * domain; absent: tracking off, the stack's configuration set.
   */
  senderOptions?: (domain: string) => Promise<SenderOptions>;
  /** The suppression list, read once per email (one batch read); absent: nobody is left out. */
  suppressions?: Pick<SuppressionRepository, 'find'>;
  clock: Clock;
  /** Where webhook events go (absent: none are raised). */
  events?: EventPublisher;
  /** Where attachments and large bodies are kept (absent: an email with any of them fails). */
  content?: ContentStore;
  /** Fetches attachments given by URL (absent: such an email fails). */
  fetcher?: FileFetcher;
  /**
   * Sending at the account's pace (absent: every email goes at once): the schedule all consumers
   * share, and the account's limits as this instance knows them.
   */
  pace?: { pacer: SendPacer; limits: SendingLimits };
  /**
   * What is left of the invocation (ms), and what a claim must leave room for: the longest SES call
   * (connection and answer) and the longest fetch of a file, with a margin for the writes around
   * them. Before each claim (and each fetch) the consumer checks the time left against them, so the
   * function's timeout never cuts an attempt between its claim and SES's answer.
   */
  time?: { left: () => number; sendMs: number; fetchMs: number; marginMs: number };
  /** How long deferred emails wait (absent: the AWS defaults). */
  deferTimings?: DeferTimings;
  random?: () => number;
  /** Waits until an email's slot (absent: setTimeout). */
  sleep?: (ms: number) => Promise<void>;
  log?: Log;
  counters?: Counters;
  /** Where the email metrics are counted (absent: nothing is; metrics/model.ts). */
  metrics?: MetricsCounter;
  /** A broadcast's tally: its emails' sends and endings (absent: nothing is raised; tally.ts). */
  broadcasts?: BroadcastTally;
  /**
   * `broadcast`: the broadcast lane's consumer (emails/broadcast-lane.ts): transactional mail
   * first on the schedule, the gate for broadcast emails, and the cancel check. Absent: the send queue's.
   */
  lane?: 'broadcast';
  /** Whether an email's broadcast was canceled (absent: never asked; an email of a canceled broadcast is sent). */
  broadcastStates?: BroadcastStates;
}

export type DeliverOutcome =
  | { result: 'sent'; messageId: string; suppressed?: number }
  /** Every recipient is on the suppression list: settled `bounced`, and SES never called. */
  | { result: 'suppressed'; recipients: number }
  /** Nothing to do: sent or final already, an attempt is under way or its outcome pending, or no such email. */
  | { result: 'skipped'; why: 'done' | 'in_progress' | 'missing' }
  /** A scheduled email whose time has not come (moved later, or the message came early): not sent now. */
  | { result: 'not_due'; dueAt: string }
  /** Final: the provider refused it for good, or refused it on every attempt. */
  | { result: 'failed'; reason: string; gaveUp: boolean }
  /**
   * The provider refused it for now and did not take it: try again later (the queue redelivers).
   * `resend`: it never got the request (no connection): tried again as a new message, delayed a
   * little, rather than by leaving the message in flight for the visibility timeout.
   */
  | { result: 'retry'; reason: string; resend?: boolean; unreleased?: StandingClaim }
  /**
   * Not sent now, and not an attempt: SES's limits (a throttle, a spent quota, sending paused), the
   * shared schedule booked further ahead than this invocation can wait, or too little of its time
   * left. It goes back on the queue as a new message, visible again at `retryAt` (ms).
   * `unreleased` (here and on a retry): the claim SES answered without taking the email, which could
   * not be released; the new message carries it, to take it over.
   */
  | { result: 'deferred'; why: DeferReason; reason: string; retryAt: number; unreleased?: StandingClaim }
  /** The provider may have taken it: never tried again; its Send event or the sweeper settles it. */
  | { result: 'unknown'; reason: string }
  /** Its broadcast was canceled before it was claimed: ended `failed`, never handed to SES. */
  | { result: 'canceled'; reason: string };

/** The AWS defaults of how long deferred emails wait (send-timings.ts derives the stack's). */
export const DEFAULT_DEFER_TIMINGS: DeferTimings = {
  throttleBackoffMs: 1_000,
  throttleBackoffMaxMs: 300_000,
  blockedRetryMinMs: 300_000,
  blockedRetryMaxMs: 900_000,
};

/** One email of a batch: its message's job, and whether the queue will not redeliver after this attempt. */
export interface BatchItem {
  job: QueuedJob;
  finalAttempt: boolean;
}

/** An email read and checked, ready to be claimed and sent. */
export interface Ready {
  ready: true;
  queued: QueuedJob;
  job: SendJob;
  left: Suppressed;
  finalAttempt: boolean;
  /** Recipients SES will count (those not suppressed). */
  recipients: number;
}

/**
 * An email put back for later: not claimed (or its claim released), not an attempt. Recorded on
 * the email (best effort), so the sweeper does not take it for stranded however long it waits. A
 * throttle backs off further each time SES throttles the same email; the other reasons wait for
 * what they wait for (the schedule's room, the quota), jittered.
 */
export async function defer(
  deps: DeliverDeps,
  queued: QueuedJob,
  why: DeferReason,
  reason: string,
  busyForMs = 0,
  unreleased?: StandingClaim,
): Promise<DeliverOutcome> {
  const now = deps.clock.now().getTime();
  deps.counters?.count('SendDeferred');
  if (why === 'quota' || why === 'paused') deps.counters?.count('SesSendingBlocked');
  // A throttle released its claim, which records the refusal already; a claim left standing (its
  // release failed) keeps the sweeper from the email until the message carrying it takes it over.
  if (why !== 'rate' && !unreleased)
    await deps.emails
      .markDeferred(queued.id, now)
      .catch((error) => deps.log?.warn('could not record a deferral', { email_id: queued.id, error }));
  const delayMs = deferDelayMs(
    why,
    queued.throttles ?? 0,
    deps.deferTimings ?? DEFAULT_DEFER_TIMINGS,
    deps.random,
    busyForMs,
  );
  // A time, not a delay: its message is put back once the batch is done, maybe seconds later.
  return { result: 'deferred', why, reason, retryAt: now + delayMs, ...(unreleased ? { unreleased } : {}) };
}
