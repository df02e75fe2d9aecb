import type { SendQuota } from './pacing.js';

export interface Clock {
  now(): Date;
}

/**
 * Where the use cases log. Fields are explicit (never an event, a header or a body); an `error`
 * field carries the Error itself, so its stack and cause are kept.
 */
export interface Log {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/**
 * What the service counts (CloudWatch metrics on AWS, written as embedded metric format lines, so
 * counting costs no API call). A closed list, each a metric of its own: no per-value dimensions.
 */
export const COUNTERS = [
  'EmailsAccepted',
  'IdempotentReplays',
  'RateLimited',
  'EmailsSent',
  'SendRetried',
  'SesThrottled',
  'SendDeferred',
  'SesSendingBlocked',
  'SendOutcomeUnknown',
  'EmailsFailedRejected',
  'EmailsFailedGaveUp',
  'EmailsFailedDeadLetter',
  'EmailsFailedUnknownOutcome',
  'EmailsFailedNoFinalEvent',
  'SweepRequeued',
  'SweepDeferred',
  'EventsSent',
  'EventsDelivered',
  'EventsBounced',
  'EventsComplained',
  'EventsDelayed',
  'EventsFailed',
  'EventsOpened',
  'EventsClicked',
  'EventsAutomated',
  'SuppressionsAdded',
  'RecipientsSuppressed',
  'WebhookMessagesPublished',
  'WebhookPublishFailed',
  'WebhookEventsKept',
  'WebhookEventsRepublished',
  'WebhookAttemptsSucceeded',
  'WebhookAttemptsFailed',
  'WebhookMessagesFailed',
  'WebhooksDisabled',
  'WebhookRetriesParked',
  'WebhookRetriesRequeued',
  'WebhookEndpointsPaused',
  'WebhookMessagesHeld',
  'WebhookMessagesReleased',
  'ScheduledDispatched',
  'MetricCountsLost',
  /** A broadcast's tally write that failed after its email's record was made (emails/tally.ts). */
  'BroadcastTallyLost',
  'EmailsReceived',
  'ReceivedUnparsed',
  'ReceivedVirus',
  'ReceivedSwept',
  /** 1 when SES's active receipt rule set does not hold our rules (receiving gets no mail), else 0. */
  'ReceiptRuleSetNotActive',
] as const;

export type CounterName = (typeof COUNTERS)[number];

export interface Counters {
  count(name: CounterName, value?: number): void;
}

/** For tests and callers that count nothing. */
export const noCounters: Counters = { count: () => undefined };

export const systemClock: Clock = { now: () => new Date() };

// ---------------------------------------------------------------------------------------------
// Webhooks

/**
 * The shared schedule every send consumer takes its turn from, so that together they stay within
 * the account's SES send rate (one small item in the table: the next free moment).
 */
export interface SendPacer {
  /**
   * Books `durationMs` of sending from the first free moment not before `nowMs`, if that moment is
   * no later than `latestStartMs`: resolves with it (`startAt`); else books nothing and resolves
   * with how far ahead the schedule is booked (`busyUntil`).
   */
  reserve(
    durationMs: number,
    nowMs: number,
    latestStartMs: number,
  ): Promise<{ startAt: number } | { busyUntil: number }>;
}

/** Reads the account's SES sending limits (GetAccount). */
export interface SendQuotaReader {
  read(): Promise<SendQuota>;
}

/** A download link, and the moment it stops working. */
export interface DownloadLink {
  url: string;
  expiresAt: Date;
}

/** Where attachments and large bodies are kept (S3 on AWS). Keys are the service's (attachments.ts). */
export interface ContentStore {
  put(key: string, bytes: Uint8Array, contentType: string): Promise<void>;
  /** The bytes, or null when nothing is stored at that key. */
  get(key: string): Promise<Uint8Array | null>;
  /** The object's size in bytes, or null when nothing is stored at that key. */
  size(key: string): Promise<number | null>;
  /**
   * A link anyone holding it can download the object with, and until when it works: when
   * `expiresInSeconds` pass, or sooner when the credentials that signed it expire first (a
   * presigned S3 link dies with the session that signed it).
   */
  downloadUrl(
    key: string,
    file: { filename: string; contentType: string },
    expiresInSeconds: number,
  ): Promise<DownloadLink>;
}

/** Why a fetch of a user's URL failed; `temporary`: trying again later may succeed. */
export class FetchError extends Error {
  constructor(
    message: string,
    readonly temporary: boolean,
  ) {
    super(message);
    this.name = 'FetchError';
  }
}

/** Fetches files from users' URLs (attachments' `path`), guarded like webhook deliveries. */
export interface FileFetcher {
  /** The URL's bytes, at most `maxBytes` of them; throws FetchError. */
  fetch(url: string, maxBytes: number): Promise<Uint8Array>;
}

/**
 * How a claim on a unique name went (a domain's name, a template's alias): taken for this id, or
 * held by another, for good (`active`: its entity exists) or by a create under way (`creating`).
 */
export type NameClaim = { claimed: true } | { claimed: false; id: string; state: 'creating' | 'active' };
