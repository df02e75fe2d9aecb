import * as z from 'zod/mini';
import { formatAddress, type ParsedAddress, parseAddress } from '../shared/address.js';
import { address, MAX_SUBJECT_CHARS } from '../shared/email-fields.js';
import { attachmentsSchema, type StoredAttachment } from './attachments.js';
import type { EmailContent, EmailEvent, Tag, TemplateUse } from './content.js';
import type { RecipientOutcome } from './recipients.js';
import type { EmailStatus, LastEvent } from './status.js';

export { address, MAX_SUBJECT_CHARS } from '../shared/email-fields.js';
export type { EmailContent, EmailEvent, Tag, TemplateUse } from './content.js';
export { updateEmailSchema } from './reschedule-request.js';

/** Limits of `POST /v1/emails`. SES refuses a message with more than 50 recipients in all. */
export const MAX_RECIPIENTS = 50;

const codePoints = (s: string) => [...s].length;

/** One address or a list of them; each entry is checked, and an error names the entry (`to.3`). */
export const addressList = (field: string) =>
  z
    .pipe(
      z.unknown(),
      z.transform((value: unknown, ctx) => {
        const single = typeof value === 'string';
        if (!single && !Array.isArray(value)) {
          ctx.issues.push({
            code: 'custom',
            message: `${field} must be an email address or a list of email addresses`,
            input: value,
          });
          return z.NEVER;
        }
        const entries: unknown[] = single ? [value] : (value as unknown[]);
        if (entries.length > MAX_RECIPIENTS) {
          ctx.issues.push({
            code: 'custom',
            message: `${field} may list at most ${MAX_RECIPIENTS} addresses`,
            input: value,
          });
          return z.NEVER;
        }
        const parsed: ParsedAddress[] = [];
        entries.forEach((entry, index) => {
          const result =
            typeof entry === 'string'
              ? parseAddress(entry)
              : { error: 'must be a string with an email address' };
          if ('error' in result) {
            ctx.issues.push({
              code: 'custom',
              message: result.error,
              input: entry,
              path: single ? [] : [index],
            });
          } else parsed.push(result);
        });
        return parsed;
      }),
    )
    .register(z.globalRegistry, addressListMeta(field));

/**
 * What an address list is, for the OpenAPI document: its schema reads any value and checks it in a
 * transform, which JSON Schema cannot express by itself (metadata only: what it accepts is unchanged).
 */
const addressListMeta = (field: string) => ({
  anyOf: [
    { type: 'string', description: 'One address: `a@b.com` or `Name <a@b.com>`.' },
    { type: 'array', items: { type: 'string' }, maxItems: MAX_RECIPIENTS },
  ],
  description: `${field}: one email address or a list of at most ${MAX_RECIPIENTS} (\`a@b.com\` or \`Name <a@b.com>\`).`,
});

/**
 * Tags (Resend's `tags`): they go to SES as message tags, so SES's events carry them back. SES's
 * rules for a tag's name and value; at most 40 per email, as SES takes 50 on one email and we keep
 * room for our own (`email_id`, `esvc_template`).
 */
export const MAX_TAGS = 40;
export const RESERVED_TAGS = ['email_id', 'esvc_template'] as const;
const TAG_TEXT = /^[A-Za-z0-9_-]{1,256}$/;
const tagText = (what: string) =>
  z
    .string({ error: `${what} must be a string` })
    .check(
      z.refine(
        (s) => TAG_TEXT.test(s),
        `${what} must be 1 to 256 ASCII letters, digits, underscores (_) or dashes (-)`,
      ),
    );
const tags = z
  .array(
    z.strictObject(
      { name: tagText('name'), value: tagText('value') },
      {
        error: (issue) =>
          issue.code === 'unrecognized_keys' ? undefined : 'must be an object {name, value}',
      },
    ),
    { error: 'tags must be a list of {name, value}' },
  )
  .check(
    z.superRefine((list, ctx) => {
      if (list.length > MAX_TAGS)
        ctx.issues.push({ code: 'custom', message: `tags may list at most ${MAX_TAGS} tags`, input: list });
      const seen = new Set<string>();
      list.forEach((tag, index) => {
        if ((RESERVED_TAGS as readonly string[]).includes(tag.name))
          ctx.issues.push({
            code: 'custom',
            path: [index, 'name'],
            message: `"${tag.name}" is the service's own tag; choose another name`,
            input: tag.name,
          });
        else if (seen.has(tag.name))
          ctx.issues.push({
            code: 'custom',
            path: [index, 'name'],
            message: `"${tag.name}" is given twice`,
            input: tag.name,
          });
        seen.add(tag.name);
      });
    }),
  );

/** The `tags` field's check, for tags given otherwise (an SMTP message's X-SES-MESSAGE-TAGS). */
export const tagsSchema = tags;
/**
 * Custom headers (Resend's `headers`), passed to SES. SES's rules (a name of printable ASCII
 * without `:`, at most 126 characters; a value of printable ASCII, at most 870; at most 15 of
 * them); no line breaks, so no header injection; and none of the headers SES or this service set.
 */
export const MAX_HEADERS = 15;
const HEADER_NAME = /^[!-9;-~]{1,126}$/;
const HEADER_VALUE = /^[ -~]{1,870}$/;
const OWN_HEADERS = new Set([
  'from',
  'to',
  'cc',
  'bcc',
  'subject',
  'reply-to',
  'sender',
  'return-path',
  'message-id',
  'date',
  'mime-version',
  'received',
  'dkim-signature',
  'feedback-id',
]);
const isOwnHeader = (name: string) => {
  const lower = name.toLowerCase();
  return OWN_HEADERS.has(lower) || lower.startsWith('content-') || lower.startsWith('x-ses-');
};
const headers = z
  .pipe(
    z.record(z.string(), z.unknown(), { error: 'headers must be an object of {"Name": "value"}' }),
    z.transform((record, ctx) => {
      const entries = Object.entries(record);
      if (entries.length > MAX_HEADERS)
        ctx.issues.push({
          code: 'custom',
          message: `headers may set at most ${MAX_HEADERS} headers`,
          input: record,
        });
      const seen = new Set<string>();
      for (const [name, value] of entries) {
        const problem = !HEADER_NAME.test(name)
          ? 'is not a valid header name (printable ASCII without ":" or spaces, at most 126 characters)'
          : isOwnHeader(name)
            ? 'is set by the service itself; use the matching field (from, to, subject, reply_to, …)'
            : seen.has(name.toLowerCase())
              ? 'is given twice'
              : typeof value !== 'string'
                ? 'must have a string value'
                : /[\r\n]/.test(value)
                  ? 'must not contain line breaks'
                  : !HEADER_VALUE.test(value)
                    ? 'must be 1 to 870 printable ASCII characters (encode others as RFC 2047 words)'
                    : undefined;
        seen.add(name.toLowerCase());
        if (problem)
          ctx.issues.push({ code: 'custom', path: [name], message: `${name} ${problem}`, input: value });
      }
      return record as Record<string, string>;
    }),
  )
  .register(z.globalRegistry, {
    type: 'object',
    additionalProperties: { type: 'string', minLength: 1, maxLength: 870 },
    maxProperties: MAX_HEADERS,
    description: `Custom headers, \`{"Name": "value"}\`: at most ${MAX_HEADERS}, printable ASCII, none of the headers the service sets (From, To, Subject, Message-ID, Content-*, …).`,
  });

/** A topic's id, as Resend's are: a UUID (ours are UUIDv7, lower-case). */
const TOPIC_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The headers the send gate writes on every message of an email with `topic_id` (RFC 8058): one
 * given in `headers` beside `topic_id` is refused rather than replaced without a word.
 */
export const UNSUBSCRIBE_HEADERS = ['list-unsubscribe', 'list-unsubscribe-post'] as const;

export const sendEmailSchema = z
  .strictObject(
    {
      from: address,
      to: addressList('to').check(z.refine((list) => list.length >= 1, 'to must list at least one address')),
      subject: z.string({ error: 'subject is required and must be a string' }).check(
        z.refine((s) => s.trim().length > 0, 'subject must not be empty'),
        z.refine(
          (s) => codePoints(s) <= MAX_SUBJECT_CHARS,
          `subject may be at most ${MAX_SUBJECT_CHARS} characters`,
        ),
        z.refine((s) => !/[\r\n]/.test(s), 'subject must not contain line breaks'),
      ),
      html: z.optional(z.string({ error: 'html must be a string' })),
      text: z.optional(z.string({ error: 'text must be a string' })),
      reply_to: z.optional(addressList('reply_to')),
      cc: z.optional(addressList('cc')),
      bcc: z.optional(addressList('bcc')),
      tags: z.optional(tags),
      headers: z.optional(headers),
      attachments: z.optional(attachmentsSchema),
      // Read against the request's time by the use case (schedule.ts): the schema knows no clock.
      scheduled_at: z.optional(
        z.string({ error: 'scheduled_at must be a string: an ISO 8601 time or, for example, "in 1 hour"' }),
      ),
      // Resend's: the email goes only to recipients whose choice for the topic lets it (deliver-gate.ts).
      topic_id: z.optional(
        z
          .string({ error: "topic_id must be a string: a topic's id" })
          .check(z.refine((s) => TOPIC_ID.test(s), "topic_id must be a topic's id (a UUID)")),
      ),
    },
    { error: (issue) => (issue.code === 'unrecognized_keys' ? undefined : 'the body must be a JSON object') },
  )
  .check(
    z.superRefine((email, ctx) => {
      if (!email.html && !email.text) {
        ctx.issues.push({
          code: 'custom',
          path: ['html'],
          message: 'at least one of html or text is required',
          input: email,
        });
      }
      if (email.topic_id && email.headers && Object.keys(email.headers).length > MAX_HEADERS - 2)
        ctx.issues.push({
          code: 'custom',
          path: ['headers'],
          message: `an email with topic_id may set at most ${MAX_HEADERS - 2} headers: SES takes ${MAX_HEADERS}, and the service sets List-Unsubscribe and List-Unsubscribe-Post`,
          input: email.headers,
        });
      if (email.topic_id && email.headers)
        for (const name of Object.keys(email.headers))
          if ((UNSUBSCRIBE_HEADERS as readonly string[]).includes(name.toLowerCase()))
            ctx.issues.push({
              code: 'custom',
              path: ['headers', name],
              message: `${name} is set by the service on an email with topic_id (each recipient gets its own one-click unsubscribe link); leave it out`,
              input: email.headers[name],
            });
      const total = email.to.length + (email.cc?.length ?? 0) + (email.bcc?.length ?? 0);
      if (total > MAX_RECIPIENTS) {
        ctx.issues.push({
          code: 'custom',
          path: ['to'],
          message: `an email may have at most ${MAX_RECIPIENTS} recipients across to, cc and bcc (got ${total})`,
          input: email,
        });
      }
    }),
  );

export type SendEmailInput = z.output<typeof sendEmailSchema> & { template?: TemplateUse };

export function toContent(input: SendEmailInput): EmailContent {
  return {
    ...(input.template ? { template: input.template } : {}),
    from: formatAddress(input.from),
    to: input.to.map(formatAddress),
    cc: (input.cc ?? []).map(formatAddress),
    bcc: (input.bcc ?? []).map(formatAddress),
    reply_to: (input.reply_to ?? []).map(formatAddress),
    subject: input.subject,
    html: input.html || null,
    text: input.text || null,
    tags: input.tags ?? [],
    headers: input.headers ?? {},
    ...(input.topic_id ? { topic_id: input.topic_id.toLowerCase() } : {}),
  };
}

/** An email as listed: everything but the bodies, tags and headers. */
export interface EmailSummary
  extends Omit<EmailContent, 'html' | 'text' | 'tags' | 'headers' | 'attachments' | 'body_key'> {
  id: string;
  status: EmailStatus;
  /** Resend's field: the latest meaningful event (see status.ts). */
  last_event: LastEvent;
  /** SES's message id, once SES accepted the email. */
  message_id: string | null;
  created_at: string;
  /** When a scheduled email is (or was) due, ISO UTC; null when it was sent right away. */
  scheduled_at: string | null;
}

/** An email as read one at a time: the summary, the bodies and its delivery events. */
export interface EmailDetail extends EmailSummary {
  html: string | null;
  text: string | null;
  tags: Tag[];
  headers: Record<string, string>;
  /** As stored (not shown by GET /v1/emails/{id}: attachments have their own routes). */
  attachments?: StoredAttachment[];
  /** Where the bodies are when they are in the content store (html and text are null then). */
  body_key?: string;
  sent_at: string | null;
  failure_reason: string | null;
  /** One entry per recipient (to, cc, bcc, in that order) with its own outcome. */
  recipients: RecipientOutcome[];
  events: EmailEvent[];
}
