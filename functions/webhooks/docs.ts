import { EMAIL_ID, LIST, MESSAGE_ID, page, ref, removed, T0, T1, WEBHOOK_ID } from '../shared/examples.js';
import type { DocsOf } from '../shared/route.js';
import { MAX_WEBHOOKS, MOST_ATTEMPTS_INCLUDED } from './model.js';
import type { WEBHOOK_ROUTES } from './routes.js';

/** The webhooks' routes in the OpenAPI document: their words and examples (routes.ts declares them). */

const SECRET = 'whsec_MfKQ9r8GKYqXxgmbVj1uRHJcqNSz3pWfT8l2Z6x0aBc=';

const webhookListedExample = {
  id: WEBHOOK_ID,
  endpoint: 'https://hooks.acme.test/email',
  events: ['email.delivered', 'email.bounced'],
  status: 'enabled',
  created_at: T0,
  paused_until: null,
  failing_since: null,
};

const messageListedExample = {
  id: MESSAGE_ID,
  type: 'email.delivered',
  created_at: T1,
  status: 'success',
  next_attempt_at: null,
  attempts: 1,
};

export const WEBHOOK_DOCS: DocsOf<typeof WEBHOOK_ROUTES> = {
  'create-webhook': {
    ok: 'Added, with its signing secret.',
    example: { object: 'webhook', id: WEBHOOK_ID, signing_secret: SECRET },
    requestExample: {
      endpoint: 'https://hooks.acme.test/email',
      events: ['email.delivered', 'email.bounced'],
    },
    description: `The endpoint must be https and resolve to public addresses only; at most ${MAX_WEBHOOKS} endpoints. Every event type Resend takes may be subscribed to; those this service never raises are never sent.`,
  },
  'list-webhooks': {
    ok: 'A page of endpoints (never their secrets).',
    example: page([webhookListedExample]),
    description: LIST,
  },
  'get-webhook': {
    ok: 'The endpoint, with its signing secret, and whether its circuit breaker pauses it (`paused_until`, `failing_since`: ours).',
    example: { object: 'webhook', ...webhookListedExample, signing_secret: SECRET, disabled_reason: null },
  },
  'update-webhook': {
    ok: 'Changed.',
    example: ref('webhook', WEBHOOK_ID),
    requestExample: { events: ['email.delivered', 'email.bounced', 'email.complained'], status: 'enabled' },
    description:
      'At least one of `endpoint`, `events`, `status`. Enabling an endpoint disabled after failing starts it afresh.',
  },
  'delete-webhook': {
    ok: 'Removed: its messages still queued are dropped.',
    example: removed('webhook', WEBHOOK_ID),
  },
  'rotate-webhook-secret': {
    ok: 'The new secret; the old one keeps signing beside it for 24 hours.',
    example: {
      object: 'webhook',
      id: WEBHOOK_ID,
      signing_secret: 'whsec_Jw0yC3d2m9vQ8rB1kT5nX7pL4sA6eH0uZiGoRfMcVbY=',
    },
    description: 'Ours: Resend has no such route.',
  },
  'list-webhook-events': {
    ok: "A page of the endpoint's messages, each with its status.",
    example: page([messageListedExample]),
    description: `${LIST} With \`include=attempts\` (ours), each message also has \`recent_attempts\`: its newest ${MOST_ATTEMPTS_INCLUDED} attempts, so a page of messages and their attempts is one request. Ours: Resend has no such route.`,
  },
  'get-webhook-event': {
    ok: 'The message, with its payload as sent.',
    example: {
      object: 'webhook_event',
      ...messageListedExample,
      payload: {
        type: 'email.delivered',
        created_at: T1,
        data: {
          email_id: EMAIL_ID,
          created_at: T0,
          from: 'Acme <hello@acme.test>',
          to: ['someone@example.com'],
          subject: 'Your receipt',
        },
      },
    },
    description: 'Ours: Resend has no such route.',
  },
  'list-webhook-attempts': {
    ok: "A page of the message's attempts, newest first.",
    example: page([
      {
        id: 'atmpt_01m80mv9xk2q5b7d0wf3s8n4ja',
        http_status_code: 200,
        response: '{"ok":true}',
        sent_at: '2026-11-22T03:29:58.120Z',
        duration_ms: 184,
      },
    ]),
    description: `${LIST} Ours: Resend has no such route.`,
  },
  'replay-webhook-event': {
    ok: 'Queued: one more attempt, with the same message id (receivers deduplicate by it).',
    example: ref('webhook_event', MESSAGE_ID),
    description: 'One attempt, no retries. Ours: Resend has no such route.',
  },
};
