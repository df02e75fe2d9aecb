/*
 * The webhook event types, apart from the model so that the web console can import them: a module
 * with no imports (the console's bundle takes only what it imports, and has no node:crypto or zod).
 */

/** The events this service raises (see docs/api.md, "Webhooks"). */
export const EMITTED_EVENT_TYPES = [
  'email.sent',
  'email.delivered',
  'email.delivery_delayed',
  'email.bounced',
  'email.complained',
  'email.opened',
  'email.clicked',
  'email.failed',
  'email.suppressed',
  'email.received',
  'domain.created',
  'domain.updated',
  'domain.deleted',
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'contact.topics.updated',
  'topic.created',
  'topic.updated',
  'topic.deleted',
] as const;

/**
 * Every event type Resend's API takes in a subscription, so code written for Resend subscribes
 * unchanged; those not in EMITTED_EVENT_TYPES (scheduling, suppressions…) need features this service
 * does not have, and are never sent.
 */
export const SUBSCRIBABLE_EVENT_TYPES = [
  ...EMITTED_EVENT_TYPES,
  'email.scheduled',
  'suppression.added',
  'suppression.removed',
] as const;
