import type { MetricCounts } from '../metrics/model.js';
import type { CounterName } from '../shared/ports.js';
import type { WebhookEventType } from '../webhooks/model.js';
import type { EmailStatus, RecipientTally, TerminalStatus } from './status.js';

/** What the status item of an email says, read on its own (one GetItem). */
export interface EmailState {
  id: string;
  status: EmailStatus;
  created_at: string;
  /** When the provider accepted it (our consumer's record, or the provider's Send event). */
  sent_at?: string;
  /** When an attempt to hand it to the provider began (epoch ms); kept until the email is sent or final. */
  send_started_at?: number;
  /** The random mark of the claim that began that attempt (which worker's it is). */
  claim_mark?: string;
  /** Why that attempt's outcome is unknown (a timeout, a 5xx), recorded by the worker that made it. */
  attempt_error?: string;
  /** When the sweeper last put it back on the queue (epoch ms). */
  requeued_at?: number;
  /** When the provider last refused it without taking it (epoch ms): its message is retried from then. */
  refused_at?: number;
  /** A scheduled email is not due before this time (ISO UTC). */
  scheduled_at?: string;
  /** The API key that scheduled it: it is sent only while that key exists. */
  key_id?: string;
  /** The scheduled time it was last put on the queue for (absent: not yet, for its current time). */
  dispatched?: string;
  /** Whether it is still in the due index (scheduled, not yet sent or final). */
  due_indexed?: boolean;
  /** A scheduled email canceled before it was sent. */
  canceled?: boolean;
  /** Its recipients' final outcomes so far (absent on emails stored before they were counted). */
  tally?: RecipientTally;
}

/**
 * An email's life, in one place: every change of its status item, and what must hold for it.
 *
 *   accepted (queued) ──────────────► claimed ──► sent ──► delivered | bounced | failed
 *      │  scheduled: waits for its      │  SES refused or took      (the events, or the
 *      │  time (reschedule, dispatch,   │  nothing: released (or,   sweeper long after)
 *      │                                │  that failing, by its next message: releaseStanding)
 *      │  cancel ──► failed/canceled)   │  SES refused for good ──► failed
 *      │  lost message: requeue         │  no answer: unknown ──► failed (the sweeper; never sent again)
 *      │  never claimed: dead letter, unsendable ──► failed; every recipient suppressed ──► bounced
 *      └  SES takes nothing now (quota, paused): deferred, waits
 *
 * A transition names the facts it requires of the status item at the moment of the write. The
 * DynamoDB adapter turns them into the write's condition (adapters/dynamodb/email-conditions.ts),
 * so the check and the change are one atomic write, and two transitions that exclude each other
 * (a claim and a cancel, a reschedule and a claim) cannot both happen: one write wins. `allows` is
 * the same rule in code, for the in-memory repositories of the tests; a test holds the two to each
 * other state by state against the emulator.
 *
 * The status moves once, forward only (status.ts): every transition to a final status requires
 * `queued`, so a late or repeated event changes nothing.
 */
export const REQUIREMENTS = {
  /** The email exists. */
  exists: 'the email exists',
  /** Its status is still `queued` (not final). */
  queued: 'it is still queued',
  /** Nothing recorded it as sent. */
  unsent: 'it was not sent',
  /** It was sent (the consumer or SES's Send event recorded it). */
  sent: 'it was sent',
  /** No attempt to hand it to SES ever began. */
  unclaimed: 'no attempt began',
  /** An attempt began. */
  claimed: 'an attempt began',
  /** The attempt on record is the one that began at `attemptStartedAt`. */
  ownClaim: 'the attempt on record is this one',
  /** The claim on record carries the mark `claimMark` (with ownClaim: exactly that claim). */
  ownMark: 'the claim on record carries this mark',
  /** Not scheduled, or its time (`now`) has come. */
  due: 'its time has come',
  /** It was accepted with a `scheduled_at`. */
  scheduled: 'it is scheduled',
  /** It is still scheduled for `scheduledAt`. */
  sameTime: 'it is still scheduled for that time',
  /** Not re-queued after `notSinceMs`. */
  notRequeuedSince: 'it was not re-queued since',
  /** It has one recipient (its outcome settles it). */
  single: 'it has one recipient',
  /** Sent or final: it can never fall due again. */
  sentOrFinal: 'it was sent or is final',
} as const;
export type Requirement = keyof typeof REQUIREMENTS;

export const TRANSITIONS = {
  /** The consumer begins the one attempt there will ever be. */
  claim: ['exists', 'queued', 'unsent', 'unclaimed', 'due'],
  /** SES refused without taking it (or a throttle): the attempt is undone, it may be tried again. */
  release: ['ownClaim', 'unsent'],
  /**
   * A claim SES answered without taking the email (a throttle, a refusal) whose release failed:
   * released by the message put back with that claim's time and mark, before anything else. Only
   * that very claim: one whose SES call may have gone out is never released.
   */
  releaseStanding: ['ownClaim', 'ownMark', 'unsent'],
  /** SES takes nothing now (a spent quota, sending paused): put back, the sweeper told it waits. */
  defer: ['queued', 'unclaimed', 'unsent'],
  /** SES has it: recorded by the consumer or the Send event, whichever comes first (the first stands). */
  markSent: ['exists'],
  /** The attempt got no answer: why is recorded; the attempt stays on record, never repeated. */
  markUnknown: ['claimed', 'unsent'],
  /** A scheduled email moves to another time while it still waits. */
  reschedule: ['queued', 'scheduled', 'unsent', 'unclaimed'],
  /** The scheduler put it on the queue for its time. */
  dispatch: ['queued', 'sameTime', 'unsent', 'unclaimed'],
  /** The sweeper (or scheduler) puts a stranded one back on the queue, once per wait. */
  requeue: ['queued', 'unsent', 'unclaimed', 'notRequeuedSince'],
  /** Recipients' outcomes are recorded (counted once each); the email settles once all have one. */
  recordOutcomes: ['exists'],
  /** A scheduled email is canceled before it is sent: `failed`, `canceled`. */
  cancel: ['queued', 'scheduled', 'unsent', 'unclaimed'],
  /**
   * It ends without an attempt ever beginning: its message reached the dead-letter queue, its
   * content cannot be sent (`failed`), or every recipient is suppressed (`bounced`).
   */
  endUnsent: ['queued', 'unsent', 'unclaimed', 'due'],
  /** SES refused its attempt for good, or its outcome stayed unknown too long: `failed`. */
  failAttempt: ['queued', 'ownClaim', 'unsent'],
  /** Sent long ago and SES said nothing more: settled from what is known. */
  settleSent: ['queued', 'sent'],
  /** An event of SES's settles it (a delivery, a bounce, a rejection). */
  settleEvent: ['queued'],
  /** A one-recipient email settled by its one outcome, in the write that records it. */
  settleSingle: ['single', 'queued'],
  /** Its entry in the due index goes once it can never fall due again. */
  leaveDueIndex: ['exists', 'sentOrFinal'],
} as const satisfies Record<string, readonly Requirement[]>;
export type Transition = keyof typeof TRANSITIONS;

/** The transitions that end an email (FinishOptions.as). */
export type FinalTransition = Extract<
  Transition,
  'cancel' | 'endUnsent' | 'failAttempt' | 'settleSent' | 'settleEvent'
>;

/**
 * Why an email ends, each with the final transition that writes it and what follows once that
 * write changed the email: the status it ends in (for a settle, its recipients' outcomes say), the
 * service's own counter, the email metric (metrics/model.ts) and the webhook event. end.ts
 * performs the write and these, and every site that ends an email calls it. SES's own events
 * raise their own webhooks (record-event.ts): their endings raise none.
 */
export interface Ending {
  readonly as: FinalTransition;
  /** The status it ends in; absent: its recipients' outcomes decide (the site gives it). */
  readonly status?: TerminalStatus;
  readonly counter?: CounterName;
  readonly metric?: keyof MetricCounts;
  readonly webhook?: Extract<WebhookEventType, 'email.failed' | 'email.suppressed'>;
  /** Its metric and webhook only when it ends `failed` (its counter whatever it ends in). */
  readonly failedOnly?: true;
}

export const ENDINGS = {
  /** A scheduled email canceled while it waited (`failure_reason: canceled`). */
  canceled: { as: 'cancel', status: 'failed' },
  /**
   * An email of a broadcast canceled before its claim (emails/broadcast-lane.ts): never handed to
   * SES, `failed` and marked canceled as a canceled scheduled email is (no webhook, as for that one).
   */
  broadcastCanceled: { as: 'endUnsent', status: 'failed' },
  /** Its send message reached the dead-letter queue, no attempt ever begun. */
  deadLettered: {
    as: 'endUnsent',
    status: 'failed',
    counter: 'EmailsFailedDeadLetter',
    metric: 'failed',
    webhook: 'email.failed',
  },
  /** Its content cannot be sent (a file gone, a key revoked before it was due), no attempt begun. */
  unsendable: {
    as: 'endUnsent',
    status: 'failed',
    counter: 'EmailsFailedRejected',
    metric: 'failed',
    webhook: 'email.failed',
  },
  /** The same, after a problem that could have passed did not, on its last attempt. */
  unsendableGaveUp: {
    as: 'endUnsent',
    status: 'failed',
    counter: 'EmailsFailedGaveUp',
    metric: 'failed',
    webhook: 'email.failed',
  },
  /** Every recipient is on the suppression list: never handed to SES. */
  allSuppressed: {
    as: 'endUnsent',
    status: 'bounced',
    counter: 'RecipientsSuppressed',
    metric: 'suppressed',
    webhook: 'email.suppressed',
  },
  /** SES refused it for good. */
  rejected: {
    as: 'settleEvent',
    status: 'failed',
    counter: 'EmailsFailedRejected',
    metric: 'failed',
    webhook: 'email.failed',
  },
  /** SES refused it for now on every attempt. */
  gaveUp: {
    as: 'settleEvent',
    status: 'failed',
    counter: 'EmailsFailedGaveUp',
    metric: 'failed',
    webhook: 'email.failed',
  },
  /** Its attempt got no answer, and SES reported no Send event for too long: never sent again. */
  unknownOutcome: {
    as: 'failAttempt',
    status: 'failed',
    counter: 'EmailsFailedUnknownOutcome',
    metric: 'failed',
    webhook: 'email.failed',
  },
  /** Sent long ago and SES said nothing more: settled from what is known of its recipients. */
  noFinalEvent: {
    as: 'settleSent',
    counter: 'EmailsFailedNoFinalEvent',
    metric: 'failed',
    webhook: 'email.failed',
    failedOnly: true,
  },
  /** SES's event says it failed (a rejection, a rendering failure): the event raises its webhook. */
  providerFailed: { as: 'settleEvent', status: 'failed', metric: 'failed' },
  /** Its recipients' outcomes settle it (they are counted as they are recorded; the events raise theirs). */
  settled: { as: 'settleEvent' },
} as const satisfies Record<string, Ending>;
export type EndingName = keyof typeof ENDINGS;

/** What the requirements are measured against: the moment, and the attempt or time the caller means. */
export interface TransitionContext {
  nowMs?: number;
  attemptStartedAt?: number;
  /** The mark of the claim a releaseStanding concerns. */
  claimMark?: string;
  scheduledAt?: string;
  notSinceMs?: number;
}

/** Whether this state (null: no such email) allows the transition, as the adapter's condition decides. */
export function allows(
  state: (EmailState & { recipients?: number }) | null,
  transition: Transition,
  context: TransitionContext = {},
): boolean {
  return TRANSITIONS[transition].every((requirement) => holds(state, requirement, context));
}

function holds(
  state: (EmailState & { recipients?: number }) | null,
  requirement: Requirement,
  context: TransitionContext,
): boolean {
  if (!state) return false;
  switch (requirement) {
    case 'exists':
      return true;
    case 'queued':
      return state.status === 'queued';
    case 'unsent':
      return state.sent_at === undefined;
    case 'sent':
      return state.sent_at !== undefined;
    case 'unclaimed':
      return state.send_started_at === undefined;
    case 'claimed':
      return state.send_started_at !== undefined;
    case 'ownClaim':
      return state.send_started_at !== undefined && state.send_started_at === context.attemptStartedAt;
    case 'ownMark':
      return state.claim_mark !== undefined && state.claim_mark === context.claimMark;
    case 'due':
      return (
        state.scheduled_at === undefined || state.scheduled_at <= new Date(context.nowMs ?? 0).toISOString()
      );
    case 'scheduled':
      return state.scheduled_at !== undefined;
    case 'sameTime':
      return state.scheduled_at !== undefined && state.scheduled_at === context.scheduledAt;
    case 'notRequeuedSince':
      return state.requeued_at === undefined || state.requeued_at < (context.notSinceMs ?? 0);
    case 'single':
      return state.recipients === 1;
    case 'sentOrFinal':
      return state.status !== 'queued' || state.sent_at !== undefined;
  }
}
