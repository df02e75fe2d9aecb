/**
 * Received email: what the service keeps of a message SES (or the local SMTP twin) accepted for a
 * domain with receiving enabled. Nothing here knows SES or S3: the parser (receive.ts) maps SES's
 * receipt event and the parsed MIME into these terms, and the adapters store them.
 *
 * Where things live (the content bucket's `received/` prefix, under its own lifecycle rule,
 * `receivedRetentionDays`; the table's items expire with it):
 * - `received/raw/<SES message id>`: the message as SES wrote it (SES's S3 action, key prefix
 *   RAW_PREFIX); the one copy of what arrived, never rewritten.
 * - `received/<id>/parsed.json`: html, text and headers (ParsedBodies), read by GET only.
 * - `received/<id>/attachments/<attachment id>`: each attachment's bytes.
 * - The table: one item per received email (ReceivedEmail without the bodies), and a claim keyed by
 *   SES's message id, so a message SES hands over twice is one received email.
 */

/** The content bucket's prefix for received mail (its lifecycle rule is receivedRetentionDays). */
export const RECEIVED_PREFIX = 'received/';
/** Where SES's S3 action writes each raw message (`<prefix><SES message id>`). */
export const RAW_PREFIX = `${RECEIVED_PREFIX}raw/`;
export const rawKey = (sesMessageId: string) => `${RAW_PREFIX}${sesMessageId}`;
export const parsedKey = (id: string) => `${RECEIVED_PREFIX}${id}/parsed.json`;
export const attachmentKey = (id: string, attachmentId: string) =>
  `${RECEIVED_PREFIX}${id}/attachments/${attachmentId}`;

/** Resend's `authentication` values (its docs), from SES's verdicts (PASS, FAIL, GRAY, PROCESSING_FAILED). */
export type AuthenticationResult = 'pass' | 'fail' | 'gray' | 'processing_failed' | 'unknown';
/** SES's spam and virus verdicts, kept as SES gives them (lower-cased); `unknown` where none was given. */
export type ScanVerdict = 'pass' | 'fail' | 'gray' | 'processing_failed' | 'disabled' | 'unknown';

export interface ReceivedAttachment {
  /** UUIDv7. */
  id: string;
  filename: string | null;
  content_type: string;
  content_id: string | null;
  content_disposition: 'inline' | 'attachment' | null;
  size: number;
}

export interface ReceivedEmail {
  /** UUIDv7 (Resend's document: `format: uuid`). */
  id: string;
  /** SES's message id: the raw object's key and what makes a second hand-over the same email. */
  ses_message_id: string;
  created_at: string;
  from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  reply_to: string[];
  /** SES's envelope recipients (receipt.recipients): who it was delivered for. */
  received_for: string[];
  subject: string;
  /** The Message-ID header (`<…>`), or SES's message id where the message has none. */
  message_id: string;
  in_reply_to: string | null;
  references: string[];
  attachments: ReceivedAttachment[];
  authentication: { spf: AuthenticationResult; dkim: AuthenticationResult; dmarc: AuthenticationResult };
  spam: ScanVerdict;
  virus: ScanVerdict;
  /** Size of the raw message in bytes. */
  size: number;
  /** Why the message could not be parsed (then only what could be read is kept; the raw stays). */
  parse_error?: string;
  /**
   * Some of what the message holds was cut to keep the item and `email.received` within their
   * limits (bounds.ts: a subject, addresses, references, or attachments beyond those listed, which
   * stay in the raw message); the full headers are in parsed.json.
   */
  truncated?: true;
  /** Whether `email.received` was published (false between the store and the publish). */
  notified: boolean;
}

/** What GET reads beside the item: the bodies and headers, kept in S3 (parsedKey). */
export interface ParsedBodies {
  html: string | null;
  text: string | null;
  /** Header names lower-cased as postal-mime gives them; a repeated header's values joined by ", ". */
  headers: Record<string, string>;
}
