import { emailIdTime } from '../shared/ids.js';
import type { WebhookEvent, WebhookEventType } from '../webhooks/model.js';
import type { EmailContent } from './email.js';

/**
 * An email's webhook events, in Resend's shape, built in one place whatever raises them (the send
 * consumer, SES's events, the sweeper, the scheduler).
 */

/** What an email is, as its events tell it: the sender as sent, the subject, the tags, the template. */
export interface EmailSource {
  from: string;
  subject: string;
  /** Tags as Resend's events carry them: `{name: value}`. */
  tags: Record<string, string>;
  template_id?: string;
  /** The broadcast it was fanned out from (Resend's `broadcast_id` in email events' data). */
  broadcast_id?: string;
}

/** What an email event says about its email (Resend's `data`, less the recipients and the detail). */
export interface EmailFacts extends EmailSource {
  email_id: string;
  /** The provider's message id, once it has one. */
  message_id?: string;
}

/** Tags as Resend's events carry them: `{name: value}`. */
export const tagsObject = (tags: readonly { name: string; value: string }[]): Record<string, string> =>
  Object.fromEntries(tags.map((t) => [t.name, t.value]));

/** An email's source, from its stored content. */
export const sourceOf = (
  content: Pick<EmailContent, 'from' | 'subject' | 'tags' | 'template' | 'broadcast_id'>,
): EmailSource => ({
  from: content.from,
  subject: content.subject,
  tags: tagsObject(content.tags),
  ...(content.template ? { template_id: content.template.id } : {}),
  ...(content.broadcast_id ? { broadcast_id: content.broadcast_id } : {}),
});

/** The facts of an email's events: the one builder of them. */
export const emailFacts = (emailId: string, source: EmailSource, messageId?: string): EmailFacts => ({
  email_id: emailId,
  ...source,
  ...(messageId ? { message_id: messageId } : {}),
});

/**
 * An email event in Resend's shape: `data` has the email's id, its creation time, the sender as
 * sent, the recipients the event concerns, the subject, the provider's message id and the tags as
 * an object, then the event's own detail (`bounce`, `failed`, `suppressed`).
 */
export function emailEvent(
  type: Extract<WebhookEventType, `email.${string}`>,
  at: string,
  facts: EmailFacts,
  to: readonly string[],
  detail: Record<string, unknown> = {},
): WebhookEvent {
  return {
    type,
    created_at: at,
    key: `${type}|${facts.email_id}|${at}|${[...to].sort().join(',')}`,
    data: {
      email_id: facts.email_id,
      created_at: new Date(emailIdTime(facts.email_id)).toISOString(),
      from: facts.from,
      to: [...to],
      subject: facts.subject,
      ...(facts.message_id ? { message_id: facts.message_id } : {}),
      tags: facts.tags,
      ...(facts.template_id ? { template_id: facts.template_id } : {}),
      ...(facts.broadcast_id ? { broadcast_id: facts.broadcast_id } : {}),
      ...detail,
    },
  };
}
