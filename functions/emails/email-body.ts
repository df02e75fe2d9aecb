import type { TemplateUse } from './email.js';

/*
 * Its own module, apart from the send request's schemas in email.ts: the functions that answer
 * emails (list, get) load no schema of a send.
 */

/**
 * An email as the API shows it: Resend's email object. Where Resend's document says string, a
 * value we do not have is left out rather than `null`: `message_id` before SES took the email,
 * `html` or `text` when it was sent without one (or its bodies are past retention).
 */
export function toEmailBody<
  T extends { message_id: string | null; html?: string | null; text?: string | null },
>(email: T) {
  // An SMTP email's MIME (content.ts `mime`) is where the message is kept, not a field of the email.
  const {
    message_id,
    html,
    text,
    template,
    mime: _,
    ...rest
  } = email as T & {
    template?: TemplateUse;
    mime?: unknown;
  };
  return {
    object: 'email' as const,
    ...rest,
    // Our field, as Resend's events name it; the version beside it.
    ...(template ? { template_id: template.id, template_version_id: template.version_id } : {}),
    ...(message_id !== null ? { message_id } : {}),
    ...(html != null ? { html } : {}),
    ...(text != null ? { text } : {}),
  };
}
