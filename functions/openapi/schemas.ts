import * as z from 'zod/mini';
import { PERMISSIONS } from '../api-keys/model.js';
import { DOMAIN_STATUSES, type DomainStatus, type TlsMode } from '../domains/model.js';
import { AUTOMATED_REASONS } from '../emails/engagement.js';
import { RECIPIENT_STATUSES, type RecipientKind, type SuppressedReason } from '../emails/recipients.js';
import { type DeliveryEventType, EMAIL_STATUSES, LAST_EVENTS } from '../emails/status.js';
import { SUPPRESSION_ORIGINS } from '../suppressions/ports.js';
import type { TemplateStatus } from '../templates/model.js';
import { VARIABLE_TYPES } from '../templates/render.js';
import {
  EMITTED_EVENT_TYPES,
  MESSAGE_STATUSES,
  SUBSCRIBABLE_EVENT_TYPES,
  WEBHOOK_STATUSES,
} from '../webhooks/model.js';

/**
 * The answers of the API, described once, for the OpenAPI document (document.ts). The requests are
 * described by the schemas the handlers validate with (operations.ts names them); the answers by
 * these, which only the document uses: the contract test checks every answer the end-to-end tests
 * receive against them, so a field added to an answer and not here fails a test.
 *
 * Each schema registered in `components` becomes `#/components/schemas/<id>`.
 */
export const components = z.registry<{ id: string; description?: string }>();

export const named = <S extends z.ZodMiniType>(id: string, schema: S, description?: string): S => {
  components.add(schema, { id, ...(description ? { description } : {}) });
  return schema;
};

/** An ISO 8601 time in UTC, as every `*_at` field. */
export const timestamp = z.string().register(z.globalRegistry, { format: 'date-time' });

/** The one error shape (shared/errors.ts). */
export const errorSchema = named(
  'Error',
  z.object({
    statusCode: z.number().check(z.int()),
    name: z.string(),
    message: z.string(),
    errors: z.optional(z.array(z.object({ field: z.string(), message: z.string() }))),
  }),
  'Every error: its status code, a stable name (as Resend names them), a message that says what to do, and for a 400 the offending fields.',
);

/** A page of a list: `{object: "list", has_more, data}`. */
export const listOf = <S extends z.ZodMiniType>(item: S) =>
  z.object({ object: z.literal('list'), has_more: z.boolean(), data: z.array(item) });

/** `{object, id}`: what most changes answer. */
export const reference = (object: string) => z.object({ object: z.literal(object), id: z.string() });

/** `{object, id, deleted: true}`: what a removal answers. */
export const deletion = (object: string) =>
  z.object({ object: z.literal(object), id: z.string(), deleted: z.literal(true) });

/** What a send answers (POST /v1/emails). */
export const sentEmailSchema = named(
  'SentEmail',
  z.object({
    id: z.string(),
    status: z.enum(EMAIL_STATUSES),
    created_at: timestamp,
    last_event: z.optional(z.literal('scheduled')),
    scheduled_at: z.optional(timestamp),
  }),
  'The accepted email: its id, its status now (`queued` when new) and, when scheduled, its time.',
);

// ---------------------------------------------------------------------------------------------
// Emails

/** SES's delivery events as an email records them (emails/status.ts DeliveryEventType). */
const DELIVERY_EVENT_TYPES = [
  'sent',
  'delivered',
  'delayed',
  'bounced',
  'complained',
  'failed',
  'opened',
  'clicked',
] as const satisfies readonly DeliveryEventType[];
const RECIPIENT_KINDS = ['to', 'cc', 'bcc'] as const satisfies readonly RecipientKind[];
const SUPPRESSED_REASONS = [
  'previous_bounce',
  'previous_complaint',
  'manual',
] as const satisfies readonly SuppressedReason[];
// Every value of the types above is listed (a new one fails the type check here).
type Missing<T, Listed extends readonly unknown[]> = Exclude<T, Listed[number]>;
const _complete: [
  Missing<DeliveryEventType, typeof DELIVERY_EVENT_TYPES>,
  Missing<RecipientKind, typeof RECIPIENT_KINDS>,
  Missing<SuppressedReason, typeof SUPPRESSED_REASONS>,
] = [] as unknown as [never, never, never];
void _complete;

const bounceSchema = z.object({
  type: z
    .string()
    .register(z.globalRegistry, { description: 'As SES says: `Permanent`, `Transient`, `Undetermined`.' }),
  subType: z.string().register(z.globalRegistry, {
    description: 'As SES says: `General`, `NoEmail`, `MailboxFull`, `Suppressed`…',
  }),
});

const addressArray = z.array(z.string());

/** The fields an email has listed and read alike (emails/email.ts EmailSummary through toEmailBody). */
const emailSummaryShape = {
  object: z.literal('email'),
  id: z.string(),
  status: z.enum(EMAIL_STATUSES).register(z.globalRegistry, {
    description:
      'Our status: `queued` until every recipient has an outcome (`delivered`, `bounced`) or SES refused it (`failed`).',
  }),
  last_event: z.enum(LAST_EVENTS).register(z.globalRegistry, {
    description: "Resend's field: the latest meaningful news about the email.",
  }),
  message_id: z.optional(z.string()).register(z.globalRegistry, {
    description: "SES's message id; absent until SES took the email.",
  }),
  created_at: timestamp,
  scheduled_at: z.nullable(timestamp).register(z.globalRegistry, {
    description: 'When a scheduled email is (or was) due; null when it was sent right away.',
  }),
  from: z.string(),
  to: addressArray,
  cc: addressArray,
  bcc: addressArray,
  reply_to: addressArray,
  subject: z.string(),
};

export const emailListItemSchema = named(
  'EmailListItem',
  z.object(emailSummaryShape),
  'An email as listed: without its bodies, tags, headers, recipients and events.',
);

export const emailRecipientSchema = named(
  'EmailRecipient',
  z.object({
    email: z.string(),
    kind: z.enum(RECIPIENT_KINDS),
    status: z.enum(RECIPIENT_STATUSES),
    last_event: z.enum(LAST_EVENTS),
    at: z.nullable(timestamp),
    detail: z.nullable(z.string()),
    bounce: z.optional(bounceSchema),
    suppressed: z.optional(z.object({ reason: z.enum(SUPPRESSED_REASONS) })),
  }),
  'One recipient (to, cc, bcc in that order) and its own outcome: `complained` is on top of a delivery; `suppressed`: left out, its address being on the suppression list. Ours: Resend has no per-recipient outcome.',
);

export const emailEventSchema = named(
  'EmailEvent',
  z.object({
    type: z.enum(DELIVERY_EVENT_TYPES),
    at: timestamp,
    recipients: addressArray,
    detail: z.optional(z.string()),
    bounce: z.optional(bounceSchema),
    user_agent: z.optional(z.string()),
    ip_address: z.optional(z.string()),
    automated: z.optional(z.enum(AUTOMATED_REASONS)).register(z.globalRegistry, {
      description: 'An open or click that looks made by a machine, and why (a judgement, not a fact).',
    }),
  }),
  'A delivery event SES reported for the email. Ours: Resend shows only `last_event`.',
);

export const emailSchema = named(
  'Email',
  z.object({
    ...emailSummaryShape,
    html: z.optional(z.string()).register(z.globalRegistry, {
      description: 'Absent when the email had none, or its bodies are past retention (`bodies_expired`).',
    }),
    text: z.optional(z.string()),
    tags: z.array(z.object({ name: z.string(), value: z.string() })),
    headers: z.record(z.string(), z.string()).register(z.globalRegistry, {
      description: 'The custom headers it was sent with: free-form names, string values.',
    }),
    sent_at: z.nullable(timestamp),
    failure_reason: z.nullable(z.string()),
    recipients: z.array(emailRecipientSchema),
    events: z.array(emailEventSchema),
    template_id: z.optional(z.string()),
    template_version_id: z.optional(z.string()),
    bodies_expired: z.optional(z.literal(true)).register(z.globalRegistry, {
      description:
        "Present when the bodies are past the content store's retention (the email is shown without them).",
    }),
  }),
  "An email: Resend's email object, with our own status, tags, headers, when it was sent, why it failed, each recipient's outcome and its delivery events; `template_id` and `template_version_id` when it was sent with a template.",
);

export const sentBatchSchema = named(
  'SentBatch',
  z.object({
    data: z.array(z.object({ id: z.string() })),
    errors: z.optional(z.array(z.object({ index: z.number().check(z.int()), message: z.string() }))),
  }),
  "The batch's emails, in input order (only the accepted ones); `errors` in permissive mode (`x-batch-validation: permissive`), one per email not sent, by its position.",
);

export const attachmentSchema = named(
  'Attachment',
  z.object({
    object: z.literal('attachment'),
    id: z.string(),
    filename: z.string(),
    size: z.optional(z.number().check(z.int())),
    content_type: z.string(),
    content_disposition: z.enum(['attachment', 'inline']),
    content_id: z.optional(z.string()),
    download_url: z.optional(z.string()),
    expires_at: z.optional(timestamp),
  }),
  "A file sent with an email (Resend's attachment object), with a download link valid for an hour. A file given by `path` has no size or link until it is fetched, when the email is sent; `content_id` only for an inline file.",
);

// ---------------------------------------------------------------------------------------------
// Domains

export const domainRecordSchema = named(
  'DomainRecord',
  z.object({
    record: z.enum(['DKIM', 'SPF', 'Tracking', 'TrackingCAA']),
    type: z.enum(['CNAME', 'MX', 'TXT', 'CAA']),
    name: z.string(),
    value: z.string(),
    priority: z.optional(z.number().check(z.int())),
    ttl: z.literal('Auto'),
    status: z.enum(DOMAIN_STATUSES),
  }),
  "A DNS record to publish, in Resend's terms: `DKIM`, `SPF` (the MAIL FROM subdomain's MX and TXT), and with a tracking subdomain `Tracking` (its CNAME) and `TrackingCAA`.",
);

export const domainSchema = named(
  'Domain',
  z.object({
    object: z.literal('domain'),
    id: z.string(),
    name: z.string(),
    domain: z
      .string()
      .register(z.globalRegistry, { description: 'The same as `name` (our spec names it so).' }),
    status: z
      .enum(['pending', 'verified', 'failed'] as const satisfies readonly DomainStatus[])
      .register(z.globalRegistry, {
        description: "SES's verification state, in Resend's terms (a temporary failure is still `pending`).",
      }),
    created_at: timestamp,
    region: z.string(),
    open_tracking: z.boolean(),
    click_tracking: z.boolean(),
    tls: z.enum(['opportunistic', 'enforced'] as const satisfies readonly TlsMode[]),
    tracking_subdomain: z.optional(z.string()),
    capabilities: z.object({ sending: z.literal('enabled'), receiving: z.literal('disabled') }),
    records: z.array(domainRecordSchema),
    mail_from_domain: z.string().register(z.globalRegistry, {
      description: 'Ours: the MAIL FROM (Return-Path) subdomain, so SPF aligns with the domain.',
    }),
    dmarc_record: z
      .object({
        type: z.literal('TXT'),
        name: z.string(),
        value: z.string(),
        ttl: z.literal('Auto'),
        status: z.literal('not_checked'),
      })
      .register(z.globalRegistry, {
        description: 'Ours: a suggested report-only DMARC record; SES does not check it (`not_checked`).',
      }),
  }),
  "A sending domain: Resend's domain object with the records to publish, and our own `domain`, `tls`, `mail_from_domain` and `dmarc_record`.",
);

// ---------------------------------------------------------------------------------------------
// Templates

export const templateVariableSchema = named(
  'TemplateVariable',
  z.object({
    id: z.string(),
    key: z.string(),
    type: z.enum(VARIABLE_TYPES),
    fallback_value: z.optional(z.unknown()).register(z.globalRegistry, {
      description: "Free-form: the value used when a send gives none, of the variable's type.",
    }),
    created_at: timestamp,
    updated_at: timestamp,
  }),
  'A variable a template declares.',
);

const templateStatus = z.enum(['draft', 'published'] as const satisfies readonly TemplateStatus[]);

export const templateSchema = named(
  'Template',
  z.object({
    object: z.literal('template'),
    id: z.string(),
    current_version_id: z.string(),
    name: z.string(),
    alias: z.optional(z.string()),
    from: z.optional(z.string()),
    subject: z.optional(z.string()),
    reply_to: z.nullable(addressArray),
    html: z.string(),
    text: z.optional(z.string()),
    variables: z.array(templateVariableSchema),
    created_at: timestamp,
    updated_at: timestamp,
    status: templateStatus,
    published_at: z.nullable(timestamp),
    has_unpublished_versions: z.boolean(),
  }),
  "A template (Resend's object), its current version. What it does not have is left out (`alias`, `from`, `subject`, `text`).",
);

export const templateListItemSchema = named(
  'TemplateListItem',
  z.object({
    id: z.string(),
    name: z.string(),
    status: templateStatus,
    published_at: z.nullable(timestamp),
    alias: z.optional(z.string()),
    created_at: timestamp,
    updated_at: timestamp,
  }),
  'A template as listed.',
);

// ---------------------------------------------------------------------------------------------
// API keys

export const apiKeySchema = named(
  'ApiKey',
  z.object({
    object: z.literal('api_key'),
    id: z.string(),
    name: z.string(),
    permission: z.enum(PERMISSIONS),
    domain_id: z.nullable(z.string()).register(z.globalRegistry, {
      description: 'A sending key held to one domain: that domain; null otherwise.',
    }),
    created_at: timestamp,
    last_used_at: z.nullable(timestamp),
  }),
  "An API key, never its token. Ours beside Resend's fields: `object`, `permission`, `domain_id`.",
);

export const createdApiKeySchema = named(
  'CreatedApiKey',
  z.object({
    object: z.literal('api_key'),
    id: z.string(),
    token: z
      .string()
      .register(z.globalRegistry, { description: 'The key (`esk_…`): shown this once, never stored.' }),
  }),
  'A new API key and its token.',
);

// ---------------------------------------------------------------------------------------------
// Suppressions

const suppressionShape = {
  id: z.string(),
  email: z.string(),
  origin: z.enum(SUPPRESSION_ORIGINS),
  source_id: z.nullable(z.string()).register(z.globalRegistry, {
    description: 'The email whose bounce or complaint put the address there; null when added by hand.',
  }),
  created_at: timestamp,
};

export const suppressionSchema = named(
  'Suppression',
  z.object({ object: z.literal('suppression'), ...suppressionShape }),
  'An address on the suppression list: never mailed again until it is taken off.',
);

export const suppressionListItemSchema = named(
  'SuppressionListItem',
  z.object(suppressionShape),
  'An address on the suppression list, as listed.',
);

// ---------------------------------------------------------------------------------------------
// Webhooks

const webhookListedShape = {
  id: z.string(),
  endpoint: z.string(),
  events: z.array(z.enum(SUBSCRIBABLE_EVENT_TYPES)),
  status: z.enum(WEBHOOK_STATUSES),
  created_at: timestamp,
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

export const webhookMessageListItemSchema = named(
  'WebhookMessageListItem',
  z.object(messageListedShape),
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

// ---------------------------------------------------------------------------------------------
// The short answers of changes

export const emailReferenceSchema = reference('email');
export const domainReferenceSchema = reference('domain');
export const templateReferenceSchema = reference('template');
export const apiKeyReferenceSchema = reference('api_key');
export const webhookReferenceSchema = reference('webhook');
export const webhookEventReferenceSchema = reference('webhook_event');

/** `DELETE /v1/suppressions/{id}`: the removal, with the address. */
export const suppressionRemovedSchema = z.object({
  object: z.literal('suppression'),
  id: z.string(),
  email: z.string(),
  deleted: z.literal(true),
});

export const suppressionsAddedSchema = z.object({
  data: z.array(
    z.object({
      object: z.literal('suppression'),
      id: z.string(),
      email: z.string(),
      origin: z.enum(SUPPRESSION_ORIGINS),
      added: z.boolean(),
    }),
  ),
});

export const suppressionsRemovedSchema = z.object({
  data: z.array(
    z.object({
      object: z.literal('suppression'),
      id: z.nullable(z.string()),
      email: z.nullable(z.string()),
      deleted: z.boolean(),
    }),
  ),
});
