/**
 * Webhooks: endpoints that receive the service's events, signed per Standard Webhooks (what
 * Resend's `webhooks.verify`, the `standardwebhooks` package and svix's verifier check), retried on
 * Resend's schedule. What an endpoint is, which events exist, how a message is signed and named,
 * and when it is tried again: nothing here knows HTTP, SQS or DynamoDB.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import * as z from 'zod/mini';
import { encodeBase32, newId } from '../shared/ids.js';
import { pageQuerySchema, pageShape } from '../shared/list.js';
import { EMITTED_EVENT_TYPES, SUBSCRIBABLE_EVENT_TYPES } from './event-types.js';

export const WEBHOOK_ID_PREFIX = 'wh';
export const MESSAGE_ID_PREFIX = 'msg';
export const ATTEMPT_ID_PREFIX = 'atmpt';
export const newWebhookId = (): string => newId(WEBHOOK_ID_PREFIX);
export const newAttemptId = (): string => newId(ATTEMPT_ID_PREFIX);

export { EMITTED_EVENT_TYPES, SUBSCRIBABLE_EVENT_TYPES } from './event-types.js';
export type WebhookEventType = (typeof EMITTED_EVENT_TYPES)[number];
export type SubscribableEventType = (typeof SUBSCRIBABLE_EVENT_TYPES)[number];

export const WEBHOOK_STATUSES = ['enabled', 'disabled'] as const;
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];

export interface Webhook {
  id: string;
  endpoint: string;
  events: SubscribableEventType[];
  status: WebhookStatus;
  created_at: string;
  /** `whsec_` and the base64 of 32 random bytes. */
  signing_secret: string;
  /** The secret before the last rotation, which keeps signing beside the new one until `until`. */
  previous_secret?: { secret: string; until: string };
  /** Why it is disabled (by the user, or after failing for FAILING_DISABLES_AFTER_MS). */
  disabled_reason?: string;
  /** The first failed attempt since the last successful one. */
  failing_since?: string;
  /** The circuit breaker (breaker.ts): the weight of the failures in a row since the last success. */
  failures?: number;
  /** The breaker is open until then (then half open: one probe); absent while it is closed. */
  paused_until?: string;
  /** The breaker's trips in a row (each pause is longer). */
  trips?: number;
  /** When the probe under way was claimed. */
  probe_at?: string;
  /** Set when some of its messages were held (held.ts) and not yet put back: what the requeue function tends. */
  held_at?: string;
}

/** How long the previous secret signs beside the new one after a rotation (Resend: 24 hours). */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

/** An endpoint none of whose attempts has succeeded for this long is disabled. */
export const FAILING_DISABLES_AFTER_MS = 3 * 24 * 3_600_000;

/**
 * A 2xx within this time is a success; anything else (a timeout included) is a failed attempt.
 * Resend's own is about as long; a hanging endpoint holds a delivery lane no longer than this.
 */
export const ATTEMPT_TIMEOUT_MS = 10_000;

/**
 * Most attempts to one endpoint at once within one invocation of the delivery function (its other
 * messages wait for a lane, then see the breaker as the lanes before them left it). With the
 * event source's maximum concurrency (5) that is at most 20 attempts to one endpoint service-wide,
 * 40 % of the delivery lanes.
 */
export const ENDPOINT_SHARE = 4;

/** How much of the receiver's answer an attempt keeps. */
export const MAX_RESPONSE_KEPT = 1024;

/** Most endpoints one service may have: every event is checked against each. */
export const MAX_WEBHOOKS = 50;

/**
 * The waits between attempts, Resend's schedule: the first attempt at once, then after 5 s, 5 min,
 * 30 min, 2 h, 5 h, 10 h and 10 h (each counted from the previous failure). 8 attempts over about
 * 27.6 hours; after the last one fails, the message is `failed`.
 */
export const RETRY_DELAYS_SECONDS = [5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 10 * 3600] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;

/**
 * How long after its event a message may still be attempted: the schedule's waits together (about
 * 27.6 hours). A message held by an endpoint's open breaker past it is marked failed.
 */
export const RETRY_WINDOW_MS = RETRY_DELAYS_SECONDS.reduce((sum, s) => sum + s, 0) * 1000;

/** The wait after failed attempt `attempt` (1-based), or undefined when it was the last. */
export const retryDelaySeconds = (attempt: number): number | undefined =>
  attempt >= MAX_ATTEMPTS ? undefined : RETRY_DELAYS_SECONDS[Math.max(0, attempt - 1)];

/**
 * The longest wait a retry spends on the delivery queue, as a new message sent with that delay
 * (SQS's longest message delay). A longer one is parked in the table instead, due at its time, and
 * put back on the queue by the scheduler. No retry waits hidden on the queue: a hidden message
 * counts against SQS's in-flight limit (about 120,000 for a standard queue), which one dead
 * endpoint's messages would fill, stalling delivery to every endpoint; a delayed one does not.
 */
export const MAX_QUEUE_WAIT_SECONDS = 15 * 60;

/** Where a retry waits: on the queue (up to MAX_QUEUE_WAIT_SECONDS), or parked in the table. */
export const retryWaitsIn = (delaySeconds: number): 'queue' | 'table' =>
  delaySeconds <= MAX_QUEUE_WAIT_SECONDS ? 'queue' : 'table';

/**
 * The attempt a delivery-queue message makes, 1-based: the attempts made before it was parked
 * (its message is a new one since), and the queue's receive count of this message.
 */
export const attemptNumber = (delivery: Pick<Delivery, 'attempts_made'>, receiveCount: number): number =>
  (delivery.attempts_made ?? 0) + Math.max(1, receiveCount);

// ---------------------------------------------------------------------------------------------
// Signing (https://www.standardwebhooks.com/, Svix's scheme)

const SECRET_PREFIX = 'whsec_';

export const newSigningSecret = (): string => `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` under the secret's key (the base64 after `whsec_`). */
export function signature(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(
    secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret,
    'base64',
  );
  const mac = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The secrets that sign now: the current one, and the previous one during its overlap. */
export function signingSecrets(webhook: Pick<Webhook, 'signing_secret' | 'previous_secret'>, nowMs: number) {
  const previous = webhook.previous_secret;
  return previous && Date.parse(previous.until) > nowMs
    ? [webhook.signing_secret, previous.secret]
    : [webhook.signing_secret];
}

/**
 * The headers of one attempt: Standard Webhooks' `webhook-*` and the same values under Svix's
 * `svix-*` (what Resend sends). The signature header lists one `v1,` signature per secret.
 */
export function signedHeaders(
  secrets: readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): Record<string, string> {
  const signatures = secrets.map((secret) => signature(secret, id, timestampSeconds, body)).join(' ');
  const timestamp = String(timestampSeconds);
  return {
    'webhook-id': id,
    'webhook-timestamp': timestamp,
    'webhook-signature': signatures,
    'svix-id': id,
    'svix-timestamp': timestamp,
    'svix-signature': signatures,
  };
}

/** Checks a `webhook-signature` header against one secret (for tests and receivers written with this code). */
export function verifySignature(secret: string, id: string, timestamp: string, body: string, header: string) {
  const expected = Buffer.from(signature(secret, id, Number(timestamp), body));
  return header.split(' ').some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

// ---------------------------------------------------------------------------------------------
// Events and messages

/** An event as every subscriber receives it: Resend's envelope. */
export interface WebhookEvent {
  type: WebhookEventType;
  created_at: string;
  data: Record<string, unknown>;
  /**
   * What makes the event itself unique (not sent): the same event published twice (a retried
   * consumer, SES's at-least-once delivery) gets the same message id, so receivers deduplicate.
   */
  key: string;
}

/**
 * The id of an event's message to one endpoint, `msg_…`: the event's time first (so ids sort as
 * the events happened, and a listing is newest first), then a digest of the endpoint and the
 * event's key. The same event to the same endpoint always has the same id, across retries and
 * republishing.
 */
export function messageId(webhookId: string, event: Pick<WebhookEvent, 'created_at' | 'key'>): string {
  const bytes = new Uint8Array(16);
  let t = Math.max(0, Date.parse(event.created_at) || 0);
  for (let i = 5; i >= 0; i--) {
    bytes[i] = t % 256;
    t = Math.floor(t / 256);
  }
  bytes.set(createHash('sha256').update(`${webhookId}\n${event.key}`).digest().subarray(0, 10), 6);
  return `${MESSAGE_ID_PREFIX}_${encodeBase32(bytes)}`;
}

/** The body an endpoint receives (exactly these bytes are signed). */
export const messageBody = (event: WebhookEvent): string =>
  JSON.stringify({ type: event.type, created_at: event.created_at, data: event.data });

/** One event on its way to one endpoint: what the delivery queue carries. */
export interface Delivery {
  message_id: string;
  webhook_id: string;
  type: WebhookEventType;
  created_at: string;
  body: string;
  /** A replay asked for by the API: one attempt, no retries, counted after the attempts made before. */
  replay?: { previous_attempts: number };
  /**
   * A retry that waited parked in the table: the attempts made before (the queue's receive count
   * starts again with its new message).
   */
  attempts_made?: number;
}

export const deliveryFor = (webhookId: string, event: WebhookEvent): Delivery => ({
  message_id: messageId(webhookId, event),
  webhook_id: webhookId,
  type: event.type,
  created_at: event.created_at,
  body: messageBody(event),
});

export const MESSAGE_STATUSES = ['pending', 'attempting', 'success', 'failed'] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

/** A message as kept for `GET /v1/webhooks/{id}/events`. */
export interface WebhookMessage {
  id: string;
  webhook_id: string;
  type: WebhookEventType;
  created_at: string;
  /**
   * `pending`: queued, not attempted yet (a replay); `attempting`: an attempt failed and another is
   * due at `next_attempt_at`; `success`: an attempt got a 2xx; `failed`: every attempt failed (or
   * the endpoint was disabled).
   */
  status: MessageStatus;
  next_attempt_at: string | null;
  attempts: number;
  body: string;
}

export interface WebhookAttempt {
  id: string;
  message_id: string;
  sent_at: string;
  /** 0 when no HTTP answer came (refused address, timeout, TLS or connection error). */
  http_status_code: number;
  duration_ms: number;
  /** The first MAX_RESPONSE_KEPT bytes of the answer, or what went wrong. */
  response: string;
}

// ---------------------------------------------------------------------------------------------
// The API's inputs and answers

const endpointField = z.string({ error: 'endpoint must be a URL string' }).check(
  z.refine((value) => value.length <= 2048, 'endpoint must be at most 2048 characters'),
  z.refine((value) => URL.canParse(value), 'endpoint must be an absolute URL (https://…)'),
);

const eventsField = z.pipe(
  z
    .array(
      z.enum(SUBSCRIBABLE_EVENT_TYPES, {
        error: `each event must be one of ${SUBSCRIBABLE_EVENT_TYPES.join(', ')}`,
      }),
      { error: 'events must be a list of event types' },
    )
    .check(z.refine((list) => list.length >= 1, 'events must list at least one event type'))
    // What the refinement says, for the OpenAPI document (zod cannot read a refinement).
    .register(z.globalRegistry, { minItems: 1 }),
  z.transform((list: SubscribableEventType[]) => [...new Set(list)]),
);

const bodyError = {
  error: (issue: { code: string }) =>
    issue.code === 'unrecognized_keys' ? undefined : 'the body must be a JSON object',
};

export const createWebhookSchema = z.strictObject(
  { endpoint: endpointField, events: eventsField },
  bodyError,
);

export const updateWebhookSchema = z
  .strictObject(
    {
      endpoint: z.optional(endpointField),
      events: z.optional(eventsField),
      status: z.optional(z.enum(WEBHOOK_STATUSES, { error: 'status must be enabled or disabled' })),
    },
    bodyError,
  )
  .check(
    z.refine(
      (body) => body.endpoint !== undefined || body.events !== undefined || body.status !== undefined,
      'give at least one of endpoint, events, status',
    ),
  )
  .register(z.globalRegistry, { minProperties: 1 });

export const listWebhooksQuerySchema = pageQuerySchema(pageShape(WEBHOOK_ID_PREFIX));
/**
 * The most attempts of each message `include=attempts` lists with it, newest first (its `attempts`
 * counts them all; the message's own attempts route pages through the rest).
 */
export const MOST_ATTEMPTS_INCLUDED = 20;
export const listAttemptsQuerySchema = pageQuerySchema(pageShape(ATTEMPT_ID_PREFIX));

/**
 * The listed form (Resend's list entries), and two fields of ours: until when its breaker pauses
 * it (null when closed; once passed, a probe is due) and since when its attempts fail.
 */
export const toWebhookListed = (webhook: Webhook) => ({
  id: webhook.id,
  endpoint: webhook.endpoint,
  events: webhook.events,
  status: webhook.status,
  created_at: webhook.created_at,
  paused_until: webhook.paused_until ?? null,
  failing_since: webhook.failing_since ?? null,
});

/** `GET /v1/webhooks/{id}`: Resend's object (with the secret, as Resend shows it), and why it is disabled. */
export const toWebhookBody = (webhook: Webhook) => ({
  object: 'webhook' as const,
  ...toWebhookListed(webhook),
  signing_secret: webhook.signing_secret,
  disabled_reason: webhook.status === 'disabled' ? (webhook.disabled_reason ?? null) : null,
});

export const toMessageListed = (message: WebhookMessage) => ({
  id: message.id,
  type: message.type,
  created_at: message.created_at,
  status: message.status,
  next_attempt_at: message.next_attempt_at,
  attempts: message.attempts,
});

export const toMessageBody = (message: WebhookMessage) => ({
  object: 'webhook_event' as const,
  ...toMessageListed(message),
  payload: JSON.parse(message.body) as unknown,
});

export const toAttemptBody = (attempt: WebhookAttempt) => ({
  id: attempt.id,
  http_status_code: attempt.http_status_code,
  response: attempt.response,
  sent_at: attempt.sent_at,
  duration_ms: attempt.duration_ms,
});

const deliverySchema = z.object({
  message_id: z.string().check(z.refine((s) => s.startsWith(`${MESSAGE_ID_PREFIX}_`))),
  webhook_id: z.string().check(z.refine((s) => s.startsWith(`${WEBHOOK_ID_PREFIX}_`))),
  type: z.enum(EMITTED_EVENT_TYPES),
  created_at: z.string(),
  body: z.string(),
  replay: z.optional(z.object({ previous_attempts: z.number().check(z.int(), z.gte(0)) })),
  attempts_made: z.optional(z.number().check(z.int(), z.gte(1))),
});

/** A delivery-queue message, or undefined when it is not one. */
export function parseDelivery(text: string): Delivery | undefined {
  try {
    const parsed = deliverySchema.safeParse(JSON.parse(text));
    return parsed.success ? (parsed.data as Delivery) : undefined;
  } catch {
    return undefined;
  }
}
