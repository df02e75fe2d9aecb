import type { StoredAttachment } from './attachments.js';
import type { AutomatedReason } from './engagement.js';

/**
 * What an email is, as stored: its addressed content and the events recorded against it. Types
 * only, apart from the send request's schema (email.ts), so that what reads them loads none of it.
 */

/** The template a send was rendered from, and its version (a send's `template`, once applied). */
export interface TemplateUse {
  id: string;
  version_id: string;
}

export interface Tag {
  name: string;
  value: string;
}

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
  /** As given, in order; sent to SES as message tags. */
  tags: Tag[];
  /** As given; added to the message by SES. */
  headers: Record<string, string>;
  /** Files sent with it; their bytes are in the content store (see attachments.ts). */
  attachments?: StoredAttachment[];
  /** Set when the bodies are kept in the content store at this key (html and text are null here). */
  body_key?: string;
  /** The template it was rendered from (its content is what was rendered, at acceptance). */
  template?: TemplateUse;
  /**
   * Resend's `topic_id`: the topic the email is scoped to. Each recipient is gated by its contact's
   * choice for it when the email is handed to SES (deliver-gate.ts), and gets its own message with
   * its own one-click unsubscribe link.
   */
  topic_id?: string;
  /**
   * The broadcast it was fanned out from (issue 41; functions/broadcasts/): one recipient, rendered
   * for its contact. It travels as a message tag (its events' webhooks carry `broadcast_id`), goes
   * through the broadcast lane (transactional mail first), and its outcomes are tallied for the
   * broadcast (emails/broadcast-tally.ts).
   */
  broadcast_id?: string;
  /**
   * An email sent over SMTP (issue 42; functions/smtp-relay/): the message as the client composed
   * it, kept as MIME in the content store at `key` (`size` bytes), and handed to SES as raw content
   * with the recipients as its destination. Its html, text and attachments above are the parts
   * parsed out of it (postal-mime), for the API and the console only: the MIME is what is sent.
   */
  mime?: MimeSource;
}

/** Where an SMTP email's message is kept, and what it was (emails/content.ts `mime`). */
export interface MimeSource {
  /** Its key in the content store (under `bodies/`). */
  key: string;
  /** Its size in bytes, as received. */
  size: number;
  /** Its `Message-ID` header, as the client gave it (without angle brackets), if it had one. */
  message_id?: string;
}

/** What one delivery event recorded against an email (per-recipient detail lives here). */
export interface EmailEvent {
  type: string;
  at: string;
  recipients: string[];
  detail?: string;
  /** A bounce's type and subtype, as SES reports them (Permanent/General, Transient/MailboxFull, …). */
  bounce?: { type: string; subType: string };
  /** An open's or click's user agent and IP address, as SES reports them (bounded). */
  user_agent?: string;
  ip_address?: string;
  /** Why an open or click looks made by a machine (engagement.ts); absent when nothing says so. */
  automated?: AutomatedReason;
}
