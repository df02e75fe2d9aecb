import PostalMime, { type Address, addressParser, decodeWords, type Email } from 'postal-mime';
import type { ParsedBodies, ReceivedAttachment } from './model.js';

/**
 * A raw message (RFC 5322 / MIME, up to SES's 40 MB) in the received email's terms, with
 * postal-mime (zero dependencies, about 78 KB bundled). A message postal-mime refuses (its limits:
 * MIME parts nested deeper than 256, more than 2 MiB of headers) or that breaks it is kept with what
 * could be read: its top-level headers, read here line by line, and `parse_error` saying why; the
 * raw message stays, so nothing SES accepted is lost.
 */

export interface ParsedAttachment extends Omit<ReceivedAttachment, 'id' | 'size'> {
  bytes: Uint8Array;
}

export interface ParsedMessage {
  from: string | null;
  to: string[];
  cc: string[];
  bcc: string[];
  reply_to: string[];
  subject: string;
  message_id: string | null;
  in_reply_to: string | null;
  references: string[];
  bodies: ParsedBodies;
  attachments: ParsedAttachment[];
  parse_error?: string;
}

export async function parseMessage(raw: Uint8Array): Promise<ParsedMessage> {
  let email: Email;
  try {
    email = await PostalMime.parse(raw, { attachmentEncoding: 'arraybuffer' });
  } catch (error) {
    return { ...headersOnly(raw), parse_error: error instanceof Error ? error.message : String(error) };
  }
  const headers = headerMap(email.headers.map((h) => [h.key, h.value]));
  return {
    from: email.from ? (formatted([email.from])[0] ?? null) : null,
    to: formatted(email.to),
    cc: formatted(email.cc),
    bcc: formatted(email.bcc),
    reply_to: formatted(email.replyTo),
    subject: email.subject ?? '',
    message_id: email.messageId?.trim() || null,
    in_reply_to: email.inReplyTo?.trim() || null,
    references: messageIds(email.references),
    bodies: { html: email.html ?? null, text: email.text ?? null, headers },
    attachments: email.attachments.map((a) => ({
      filename: a.filename ?? null,
      content_type: a.mimeType || 'application/octet-stream',
      content_id: a.contentId ? a.contentId.trim().replace(/^<|>$/g, '') || null : null,
      content_disposition: dispositionOf(a.disposition),
      bytes: typeof a.content === 'string' ? new TextEncoder().encode(a.content) : new Uint8Array(a.content),
    })),
  };
}

/** Resend's two values; another token a part carries (`form-data`) is served as an attachment. */
const dispositionOf = (value: string | null): 'inline' | 'attachment' | null =>
  value === null ? null : value.toLowerCase() === 'inline' ? 'inline' : 'attachment';

/** Mailboxes as `Name <address>` (a name quoted where it needs it), a group's members flattened. */
function formatted(addresses: Address[] | undefined): string[] {
  const mailboxes = (addresses ?? []).flatMap((a) => (a.group ? a.group : [a]));
  return mailboxes
    .filter((m) => m.address)
    .map((m) => {
      const name = m.name?.trim();
      if (!name) return m.address;
      const quoted = /[",<>@;:()[\]\\]/.test(name) ? `"${name.replace(/["\\]/g, '\\$&')}"` : name;
      return `${quoted} <${m.address}>`;
    });
}

/** The `<…>` ids of a References (or In-Reply-To) header, in order. */
const messageIds = (value: string | undefined): string[] => value?.match(/<[^<>\s]+>/g) ?? [];

/** Header names lower-cased, a repeated header's values joined by ", " (model.ts ParsedBodies). */
function headerMap(entries: [string, string][]): Record<string, string> {
  const map: Record<string, string> = {};
  for (const [key, value] of entries) map[key] = key in map ? `${map[key]}, ${value}` : value;
  return map;
}

/** What can be read of a message postal-mime refused: its top-level headers, unfolded. */
function headersOnly(raw: Uint8Array): Omit<ParsedMessage, 'parse_error'> {
  // Headers are ASCII (RFC 5322); latin1 reads every byte as one character, so nothing throws.
  const text = Buffer.from(raw.buffer, raw.byteOffset, Math.min(raw.length, 2 * 1024 * 1024)).toString(
    'latin1',
  );
  const end = text.search(/\r?\n\r?\n/);
  const lines = (end < 0 ? text : text.slice(0, end)).split(/\r?\n/);
  const entries: [string, string][] = [];
  for (const line of lines) {
    const last = entries[entries.length - 1];
    if (/^[ \t]/.test(line) && last) last[1] += ` ${line.trim()}`;
    else {
      const colon = line.indexOf(':');
      if (colon > 0) entries.push([line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()]);
    }
  }
  const first = (key: string) => entries.find(([k]) => k === key)?.[1];
  const addresses = (key: string) =>
    formatted(entries.filter(([k]) => k === key).flatMap(([, v]) => safeAddresses(v)));
  return {
    from: addresses('from')[0] ?? null,
    to: addresses('to'),
    cc: addresses('cc'),
    bcc: addresses('bcc'),
    reply_to: addresses('reply-to'),
    subject: safeDecode(first('subject') ?? ''),
    message_id: first('message-id') || null,
    in_reply_to: first('in-reply-to') || null,
    references: messageIds(first('references')),
    bodies: { html: null, text: null, headers: headerMap(entries) },
    attachments: [],
  };
}

function safeAddresses(value: string): Address[] {
  try {
    return addressParser(value);
  } catch {
    return [];
  }
}

function safeDecode(value: string): string {
  try {
    return decodeWords(value);
  } catch {
    return value;
  }
}
