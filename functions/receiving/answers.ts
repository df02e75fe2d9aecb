import * as z from 'zod/mini';
import { addressArray, listOf, named, timestamp } from '../shared/answers.js';

/**
 * The receiving routes' answers (shared/answers.ts says how answers are described): Resend's
 * GetReceivedEmailResponse, ListReceivedEmailsResponse, ListAttachmentsResponse and
 * RetrievedAttachment, what SDK 6.38 reads beyond them (`raw`, `received_for`), and ours: the
 * verdicts (`authentication` as Resend's docs give it, `spam`, `virus`) and the threading headers.
 */

const AUTHENTICATION_RESULTS = ['pass', 'fail', 'gray', 'processing_failed', 'unknown'] as const;
const SCAN_VERDICTS = ['pass', 'fail', 'gray', 'processing_failed', 'disabled', 'unknown'] as const;

export const receivedAttachmentSummarySchema = named(
  'ReceivedAttachmentSummary',
  z.object({
    id: z.string(),
    filename: z.nullable(z.string()),
    content_type: z.string(),
    content_id: z.optional(z.string()),
    content_disposition: z.nullable(z.enum(['inline', 'attachment'])),
    size: z.number().check(z.int()),
  }),
  'A file of a received email, as the email lists it (no link: its own routes give one). `filename` and `content_disposition` null where the message gave none; `content_id` only where it had one.',
);

const summaryShape = {
  id: z.string(),
  created_at: timestamp,
  from: z.string(),
  to: addressArray,
  cc: addressArray,
  bcc: addressArray,
  reply_to: addressArray,
  received_for: addressArray,
  subject: z.string(),
  message_id: z.string(),
  in_reply_to: z.nullable(z.string()),
  references: z.array(z.string()),
  attachments: z.array(receivedAttachmentSummarySchema),
  authentication: named(
    'ReceivedAuthentication',
    z.object({
      spf: z.enum(AUTHENTICATION_RESULTS),
      dkim: z.enum(AUTHENTICATION_RESULTS),
      dmarc: z.enum(AUTHENTICATION_RESULTS),
    }),
    "SES's SPF, DKIM and DMARC verdicts, in Resend's terms (`unknown`: none was given, as the local service gives none).",
  ),
  spam: z.enum(SCAN_VERDICTS),
  virus: z.enum(SCAN_VERDICTS),
  parse_error: z.optional(z.string()),
  truncated: z.optional(z.literal(true)),
};

export const receivedEmailListItemSchema = named(
  'ReceivedEmailListItem',
  z.object(summaryShape),
  'A received email as listed: without its bodies, headers and raw message.',
);

export const receivedEmailSchema = named(
  'ReceivedEmail',
  z.object({
    object: z.literal('email'),
    ...summaryShape,
    html: z.nullable(z.string()),
    text: z.nullable(z.string()),
    headers: z.nullable(z.record(z.string(), z.string())),
    bodies_too_large: z.optional(z.literal(true)),
    raw: z.nullable(z.object({ download_url: z.string(), expires_at: timestamp })),
  }),
  'A received email with its bodies, its headers (names lower-cased) and a download link of its raw message (`raw`: null for mail SES flagged as carrying a virus, unless the operator allows its download). Bodies too large for one answer (over 5 MB as sent) are null, with `bodies_too_large`: the raw message has them. `truncated`: what the email lists was cut to its limits (a very long subject, more than 50 addresses in a list, more than 200 attachments…): `headers` and the raw message have it all.',
);

export const receivedAttachmentSchema = named(
  'ReceivedAttachment',
  z.object({
    object: z.literal('attachment'),
    id: z.string(),
    filename: z.nullable(z.string()),
    content_type: z.string(),
    content_id: z.optional(z.string()),
    content_disposition: z.nullable(z.enum(['inline', 'attachment'])),
    size: z.number().check(z.int()),
    download_url: z.optional(z.string()),
    expires_at: z.optional(timestamp),
  }),
  'A file of a received email with a download link valid for an hour (`download_url` and `expires_at` left out for mail SES flagged as carrying a virus, unless the operator allows its download).',
);

export const receivedEmailListSchema = listOf(receivedEmailListItemSchema);
export const receivedAttachmentListSchema = listOf(receivedAttachmentSchema);
