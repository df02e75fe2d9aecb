import * as z from 'zod/mini';
import { formatAddress, type ParsedAddress, parseAddress } from './address.js';
import type { EmailStatus } from './status.js';

/** Limits of `POST /v1/emails`. SES refuses a message with more than 50 recipients in all. */
export const MAX_RECIPIENTS = 50;
export const MAX_SUBJECT_CHARS = 998;

const codePoints = (s: string) => [...s].length;

// zod/mini: the same validation as classic zod at ~12 KB instead of ~440 KB per bundle.
const address = z.pipe(
  z.string({ error: 'must be a string with an email address' }),
  z.transform((value: string, ctx) => {
    const parsed = parseAddress(value);
    if ('error' in parsed) {
      ctx.issues.push({ code: 'custom', message: parsed.error, input: value });
      return z.NEVER;
    }
    return parsed;
  }),
);

/** One address or a list of them; each entry is checked, and an error names the entry (`to.3`). */
const addressList = (field: string) =>
  z.pipe(
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
  );

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

export type SendEmailInput = z.output<typeof sendEmailSchema>;

/** The addressed content of an email, as stored and as handed to the mailer. */
export interface EmailContent {
  from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  reply_to: string[];
  subject: string;
  html: string | null;
  text: string | null;
}

export function toContent(input: SendEmailInput): EmailContent {
  return {
    from: formatAddress(input.from),
    to: input.to.map(formatAddress),
    cc: (input.cc ?? []).map(formatAddress),
    bcc: (input.bcc ?? []).map(formatAddress),
    reply_to: (input.reply_to ?? []).map(formatAddress),
    subject: input.subject,
    html: input.html || null,
    text: input.text || null,
  };
}

/** What one delivery event recorded against an email (per-recipient detail lives here). */
export interface EmailEvent {
  type: string;
  at: string;
  recipients: string[];
  detail?: string;
}

/** An email as listed: everything but the bodies. */
export interface EmailSummary extends Omit<EmailContent, 'html' | 'text'> {
  id: string;
  status: EmailStatus;
  created_at: string;
}

/** An email as read one at a time: the summary, the bodies and its delivery events. */
export interface EmailDetail extends EmailSummary {
  html: string | null;
  text: string | null;
  sent_at: string | null;
  failure_reason: string | null;
  events: EmailEvent[];
}
