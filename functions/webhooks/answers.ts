import * as z from 'zod/mini';
import { named, reference, timestamp } from '../shared/answers.js';
import {
  EMITTED_EVENT_TYPES,
  MESSAGE_STATUSES,
  MOST_ATTEMPTS_INCLUDED,
  SUBSCRIBABLE_EVENT_TYPES,
  WEBHOOK_STATUSES,
} from './model.js';

/**
 * The webhook routes' answers (shared/answers.ts says how answers are described).
 */

const webhookListedShape = {
  id: z.string(),
  endpoint: z.string(),
  events: z.array(z.enum(SUBSCRIBABLE_EVENT_TYPES)),
  status: z.enum(WEBHOOK_STATUSES),
  created_at: timestamp,
  paused_until: z.nullable(timestamp).register(z.globalRegistry, {
    description:
      'Ours: until when its circuit breaker pauses it after failures in a row (its events are kept, and delivered once a probe succeeds); once passed, a probe is due. Null when it is not paused. `status` stays `enabled`.',
  }),
  failing_since: z.nullable(timestamp).register(z.globalRegistry, {
    description:
      'Ours: the first failed attempt since its last successful one; null when its last attempt succeeded. After 3 days of failures it is disabled.',
  }),
};

export const webhookListItemSchema = named(
  'WebhookListItem',
  z.object(webhookListedShape),
  'A webhook endpoint as listed (never its secret).',
);

export const webhookSchema = named(
  'Webhook',
  z.object({
    object: z.literal('webhook'),
    ...webhookListedShape,
    signing_secret: z.string(),
    disabled_reason: z.nullable(z.string()).register(z.globalRegistry, {
      description: 'Ours: why it is disabled (by the user, or after failing for 3 days); null when enabled.',
    }),
  }),
  'A webhook endpoint with its signing secret (`whsec_…`, as Resend shows it).',
);

export const webhookSecretSchema = named(
  'WebhookSecret',
  z.object({ object: z.literal('webhook'), id: z.string(), signing_secret: z.string() }),
  "An endpoint's signing secret: the new endpoint's, or the new one after a rotation.",
);

const messageListedShape = {
  id: z.string(),
  type: z.enum(EMITTED_EVENT_TYPES),
  created_at: timestamp,
  status: z.enum(MESSAGE_STATUSES).register(z.globalRegistry, {
    description:
      '`pending`: not attempted yet; `attempting`: an attempt failed and another is due at `next_attempt_at`; `success`: an attempt got a 2xx; `failed`: every attempt failed.',
  }),
  next_attempt_at: z.nullable(timestamp),
  attempts: z.number().check(z.int()),
};

export const webhookAttemptSchema = named(
  'WebhookAttempt',
  z.object({
    id: z.string(),
    http_status_code: z.number().check(z.int()).register(z.globalRegistry, {
      description: 'The HTTP status the endpoint answered; 0 when no answer came (refused, timeout, TLS).',
    }),
    response: z.string().register(z.globalRegistry, {
      description: 'The first 1 KB of the answer, or what went wrong.',
    }),
    sent_at: timestamp,
    duration_ms: z.number().check(z.int()),
  }),
  'One delivery attempt of a message. Ours: Resend has no such route.',
);

export const webhookMessageListItemSchema = named(
  'WebhookMessageListItem',
  z.object({
    ...messageListedShape,
    recent_attempts: z.optional(z.array(webhookAttemptSchema)).register(z.globalRegistry, {
      description: `Ours, with \`include=attempts\` only: its newest attempts, at most ${MOST_ATTEMPTS_INCLUDED}, newest first (\`attempts\` counts them all).`,
    }),
  }),
  "An event's message to an endpoint, as listed. Ours: Resend has no such route.",
);

export const webhookMessageSchema = named(
  'WebhookMessage',
  z.object({
    object: z.literal('webhook_event'),
    ...messageListedShape,
    payload: z
      .object({
        type: z.enum(EMITTED_EVENT_TYPES),
        created_at: timestamp,
        data: z.record(z.string(), z.unknown()).register(z.globalRegistry, {
          description:
            "Free-form here: the event's data, as Resend's webhook events have it (an email's or a domain's).",
        }),
      })
      .register(z.globalRegistry, {
        description: 'The body the endpoint received (the signed bytes, parsed).',
      }),
  }),
  "An event's message to an endpoint, with its payload. Ours: Resend has no such route.",
);

export const webhookReferenceSchema = reference('webhook');
export const webhookEventReferenceSchema = reference('webhook_event');
