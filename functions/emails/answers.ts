import * as z from 'zod/mini';
import { addressArray, named, reference, timestamp } from '../shared/answers.js';
import { AUTOMATED_REASONS } from './engagement.js';
import { RECIPIENT_STATUSES, type RecipientKind, type SuppressedReason } from './recipients.js';
import { type DeliveryEventType, EMAIL_STATUSES, LAST_EVENTS } from './status.js';

/**
 * The emails routes' answers (shared/answers.ts says how answers are described).
 */

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
  'unsubscribed',
  'topic_opted_out',
  'topic_default_opt_out',
  'topic_deleted',
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
  "One recipient (to, cc, bcc in that order) and its own outcome: `complained` is on top of a delivery; `suppressed`: left out, its address being on the suppression list, or withheld by its choice for the email's topic (`suppressed.reason` says which). Ours: Resend has no per-recipient outcome.",
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
    topic_id: z.optional(z.string()).register(z.globalRegistry, {
      description:
        "Resend's: the topic the email was scoped to (each recipient's choice for it decided whether it got the email).",
    }),
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

export const emailReferenceSchema = reference('email');

export const sharedEmailSchema = named(
  'SharedEmail',
  z.object({ object: z.literal('email'), id: z.string(), url: z.string() }),
  "A share link of an email (Resend's ShareEmailResponse): `url` opens a read-only page of it, without a key, until it expires.",
);
/**
 * `GET /v1/emails`'s page: Resend's list, and `scanned_to` (ours) when a search combining filters
 * stopped at its bound of entries read (docs/api.md, "Searching emails (our extension)").
 */
export const emailPageSchema = z.object({
  object: z.literal('list'),
  has_more: z.boolean(),
  data: z.array(emailListItemSchema),
  scanned_to: z.optional(
    z.string().register(z.globalRegistry, {
      description:
        'Ours: a search combining filters read as far as it may for one page and stopped at this email id; the next page starts after it (after=<scanned_to>).',
    }),
  ),
});
