import { createHash } from 'node:crypto';
import PostalMime, { type Address, type Email } from 'postal-mime';
import type { ApiKey } from '../api-keys/model.js';
import { assertMaySendFrom } from '../api-keys/model.js';
import { domainOf, formatAddress, type ParsedAddress, parseAddress } from '../shared/address.js';
import { ApiError, fieldErrorsOf, validationError } from '../shared/errors.js';
import { newEmailId } from '../shared/ids.js';
import {
  attachmentId,
  attachmentKey,
  extensionOf,
  MAX_ATTACHMENTS,
  MAX_MESSAGE_BYTES,
  mimeKey,
  REFUSED_EXTENSIONS,
  type StoredAttachment,
} from './attachments.js';
import type { EmailContent } from './content.js';
import { MAX_RECIPIENTS, MAX_SUBJECT_CHARS, tagsSchema } from './email.js';
import { fingerprint, parseIdempotencyKey } from './idempotency.js';
import { DATE_FIELD_ROOM, headerFields, headerValue, tagsOfHeader } from './mime.js';
import type { IdempotencyStore } from './ports.js';
import {
  type ClaimedEmail,
  claimKey,
  type SendEmailDeps,
  type SentEmail,
  sendClaimed,
  storeAndQueue,
  withLargeBodiesStored,
} from './send-email.js';

/**
 * An SMTP message becomes an email (issue 42; accept-send.ts `acceptMime` is its entry): read and
 * checked as a send's body is, then stored and queued by the same code. Its MIME is kept as the
 * client composed it and is what SES gets (deliver.ts); its parts, parsed with postal-mime as
 * received mail's are, are what the API and the console show.
 *
 * - Recipients: the envelope's. `to` and `cc` are the header's To and Cc addresses the envelope
 *   names; every other envelope address is `bcc` (a Bcc, or a list expansion). A header address the
 *   envelope does not name is no recipient (it still stands in the header).
 * - Checks: the key's domain restriction and the verified sender domain, for the header From and
 *   for the envelope sender (MAIL FROM, unless the null sender).
 * - Idempotency: `Resend-Idempotency-Key` is an Idempotency-Key (a repeat of the same message,
 *   told by its envelope, addresses, subject, bodies and files, answers the first email; another
 *   message under it is 409). Without one, the `Message-ID` is an implicit key for 24 hours, scoped
 *   to the API key, under which any repeat is a replay (clients retry with a new Date and new MIME
 *   boundaries). Without either, no idempotency.
 */

/** The prefix of the implicit idempotency key a Message-ID gives (never an Idempotency-Key's own). */
export const MESSAGE_ID_KEY_PREFIX = 'smtp-message-id:';

/**
 * A message received over SMTP (functions/smtp-relay/), as its session hands it over: the bytes
 * after DATA (dot-unstuffing undone, CRLF line ends), the envelope, and the key it authenticated
 * with. (accept-send.ts exports it beside acceptMime.)
 */
export interface MimeSendRequest {
  raw: Uint8Array;
  envelope: {
    /** MAIL FROM's address ('' for the null sender `<>`). */
    mailFrom: string;
    /** RCPT TO's addresses, in order: the email's recipients (Bcc included). */
    recipients: string[];
  };
  apiKey: ApiKey;
}

type Envelope = MimeSendRequest['envelope'];
type MimeDeps = SendEmailDeps & { idempotency: IdempotencyStore };

/** The fields an email's content and an explicit key's fingerprint take from the message as read. */
type AddressedField = 'to' | 'cc' | 'bcc' | 'reply_to' | 'subject' | 'html' | 'text' | 'tags';
const addressed = (m: Pick<EmailContent, AddressedField>): Pick<EmailContent, AddressedField> => ({
  to: m.to,
  cc: m.cc,
  bcc: m.bcc,
  reply_to: m.reply_to,
  subject: m.subject,
  html: m.html,
  text: m.text,
  tags: m.tags,
});

/** What the message is, read and checked, before anything is claimed or stored. */
interface ReadMessage extends Pick<EmailContent, AddressedField> {
  from: ParsedAddress;
  files: { stored: Omit<StoredAttachment, 'id'>; bytes: Uint8Array }[];
  messageId?: string;
  idempotencyKey?: string;
}

export async function acceptMimeMessage(deps: MimeDeps, request: MimeSendRequest): Promise<SentEmail> {
  const { raw, envelope, apiKey } = request;
  if (!deps.content) throw validationError('sending over SMTP needs the content store, which is not set up');
  const message = await readMessage(raw, envelope);
  // As POST /v1/emails: a key restricted to a domain is refused before anything is claimed.
  assertMaySendFrom(apiKey, domainOf(message.from.email));
  const envelopeDomain = envelope.mailFrom ? domainOf(envelope.mailFrom) : undefined;
  if (envelopeDomain) assertMaySendFrom(apiKey, envelopeDomain);
  const email: ClaimedEmail = {
    check: async () => {
      await deps.assertSenderDomain(domainOf(message.from.email));
      if (envelopeDomain && envelopeDomain !== domainOf(message.from.email))
        await deps.assertSenderDomain(envelopeDomain);
    },
    content: (id) => storedMime(deps, raw, message, id),
  };
  const key = idempotencyOf(message, envelope);
  if (!key) {
    await email.check();
    return storeAndQueue(deps, (id) => email.content(id), newEmailId());
  }
  // An explicit key shares the API's scope (the same key over SMTP and HTTP is one send); the
  // implicit Message-ID key has its own, so no API key can collide with it.
  const scope = key.implicit ? `${apiKey.id}#smtp` : apiKey.id;
  const claim = await claimKey(deps, { scope, idempotencyKey: key.key }, key.print, newEmailId());
  return sendClaimed(deps, scope, claim, async () => email);
}

/**
 * The key the message is accepted once under, and its fingerprint: an explicit key's is the
 * message's meaning (its envelope, addresses, subject, bodies, tags and files' bytes), not its
 * bytes, which a client's retry changes (Date, MIME boundaries); a Message-ID's is the same for
 * every message, so any repeat of the id within 24 hours is a replay.
 */
function idempotencyOf(
  message: ReadMessage,
  envelope: Envelope,
): { key: string; print: string; implicit?: true } | undefined {
  if (message.idempotencyKey !== undefined)
    return {
      key: message.idempotencyKey,
      print: fingerprint({
        smtp: {
          envelope,
          from: formatAddress(message.from),
          ...addressed(message),
          files: message.files.map((file) => ({
            ...file.stored,
            bytes: fingerprint(Buffer.from(file.bytes).toString('base64')),
          })),
        },
      }),
    };
  // The envelope is part of the implicit key: a client told 452 at the 51st RCPT, or a relay that
  // splits a long recipient list, sends the same message (the same Message-ID) again to others,
  // which is another email; only a retry to the same envelope is a replay.
  if (message.messageId)
    return {
      key: `${MESSAGE_ID_KEY_PREFIX}${message.messageId}:${envelopeHash(envelope)}`,
      print: fingerprint({ smtp: 'message-id' }),
      implicit: true,
    };
  return undefined;
}

/** The envelope, as a short hash: its sender and its recipients, in any order and any case. */
const envelopeHash = (envelope: Envelope): string =>
  createHash('sha256')
    .update(
      JSON.stringify([
        envelope.mailFrom.toLowerCase(),
        [...new Set(envelope.recipients.map((r) => r.toLowerCase()))].sort(),
      ]),
    )
    .digest('base64url')
    .slice(0, 22);

/** The message read with postal-mime and checked as a send's fields are (a 400 naming the field). */
async function readMessage(raw: Uint8Array, envelope: Envelope): Promise<ReadMessage> {
  // A message without a Date gets one on its way to SES (mime.ts): room is kept for it.
  const limit =
    headerValue(headerFields(raw), 'date') === undefined
      ? MAX_MESSAGE_BYTES - DATE_FIELD_ROOM
      : MAX_MESSAGE_BYTES;
  if (raw.length > limit)
    throw new ApiError(
      413,
      'payload_too_large',
      `The message is ${raw.length} bytes; SES takes at most ${limit}${limit < MAX_MESSAGE_BYTES ? ' (with the Date field it lacks)' : ''}.`,
    );
  let email: Email;
  try {
    email = await PostalMime.parse(raw, { attachmentEncoding: 'arraybuffer' });
  } catch (error) {
    throw validationError(
      `The message could not be read as MIME: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const fields = headerFields(raw);
  const problem = (field: string, message: string) => validationError(message, [{ field, message }]);

  const fromMailbox = mailboxes(email.from ? [email.from] : [])[0];
  const from = fromMailbox ? parseAddress(fromMailbox.address) : { error: 'is missing' };
  if ('error' in from) throw problem('from', `The message's From header ${from.error}.`);
  const fromAddress: ParsedAddress = fromMailbox?.name ? { name: fromMailbox.name, email: from.email } : from;

  const recipients = new Map<string, string>();
  for (const [index, address] of envelope.recipients.entries()) {
    const parsed = parseAddress(address);
    if ('error' in parsed) throw problem(`to.${index}`, `Recipient ${index} (RCPT TO) ${parsed.error}.`);
    if (!recipients.has(parsed.email.toLowerCase())) recipients.set(parsed.email.toLowerCase(), parsed.email);
  }
  if (!recipients.size) throw problem('to', 'The message has no recipient (RCPT TO).');
  if (recipients.size > MAX_RECIPIENTS)
    throw problem('to', `An email may have at most ${MAX_RECIPIENTS} recipients (got ${recipients.size}).`);
  const taken = new Set<string>();
  const named = (list: Address[] | undefined) =>
    mailboxes(list).flatMap((mailbox) => {
      const lower = mailbox.address.toLowerCase();
      const address = recipients.get(lower);
      if (address === undefined || taken.has(lower)) return [];
      taken.add(lower);
      return [shown(mailbox.name, address)];
    });
  const to = named(email.to);
  const cc = named(email.cc);
  const bcc = [...recipients].filter(([lower]) => !taken.has(lower)).map(([, address]) => address);

  const subject = email.subject ?? '';
  if ([...subject].length > MAX_SUBJECT_CHARS)
    throw problem('subject', `The subject may be at most ${MAX_SUBJECT_CHARS} characters.`);

  const tagged = tagsSchema.safeParse(tagsOfHeader(headerValue(fields, 'x-ses-message-tags')));
  if (!tagged.success) {
    const errors = fieldErrorsOf(tagged.error.issues as Parameters<typeof fieldErrorsOf>[0], ['tags']);
    throw validationError(
      `The X-SES-MESSAGE-TAGS header is not a list of tags: ${errors.map((e) => `${e.field}: ${e.message}`).join('; ')}`,
      errors,
    );
  }

  if (email.attachments.length > MAX_ATTACHMENTS)
    throw problem('attachments', `An email may have at most ${MAX_ATTACHMENTS} attachments.`);
  const files = email.attachments.map((part, index) => {
    const filename = part.filename?.trim() || `attachment-${index + 1}`;
    if (REFUSED_EXTENSIONS.has(extensionOf(filename)))
      throw problem(
        `attachments.${index}.filename`,
        `Attachment ${index} (${filename}) is a .${extensionOf(filename)} file, a type SES does not send.`,
      );
    const bytes =
      typeof part.content === 'string'
        ? new TextEncoder().encode(part.content)
        : new Uint8Array(part.content);
    const contentId = part.contentId?.trim().replace(/^<|>$/g, '') || null;
    return {
      bytes,
      stored: {
        filename,
        content_type: part.mimeType || 'application/octet-stream',
        content_disposition:
          part.disposition?.toLowerCase() === 'inline' ? ('inline' as const) : ('attachment' as const),
        content_id: contentId,
        size: bytes.length,
      },
    };
  });

  const explicit = headerValue(fields, 'resend-idempotency-key');
  const messageId = email.messageId?.trim().replace(/^<|>$/g, '') || undefined;
  return {
    from: fromAddress,
    to,
    cc,
    bcc,
    reply_to: mailboxes(email.replyTo).map((mailbox) => shown(mailbox.name, mailbox.address)),
    subject,
    html: email.html || null,
    text: email.text || null,
    tags: tagged.data,
    files,
    ...(messageId ? { messageId } : {}),
    ...(explicit !== undefined ? { idempotencyKey: parseIdempotencyKey(explicit) } : {}),
  };
}

/** The mailboxes of an address list, a group's members flattened. */
const mailboxes = (list: Address[] | undefined): { name: string; address: string }[] =>
  (list ?? [])
    .flatMap((entry) => (entry.group ? entry.group : [entry]))
    .filter((mailbox): mailbox is { name: string; address: string } => Boolean(mailbox.address));

/** `Name <address>` as stored, or the bare address when the name would not read back. */
function shown(name: string | undefined, address: string): string {
  const trimmed = name?.trim();
  if (!trimmed) return address;
  const formatted = formatAddress({ name: trimmed, email: address });
  return 'error' in parseAddress(formatted) ? address : formatted;
}

/**
 * The email's content, its bytes stored first (under its id, so a resumed key puts the same keys):
 * the MIME as received, each part's file, and its bodies when large (the API's rule). Nothing is
 * visible until the email's items are written after this.
 */
async function storedMime(
  deps: MimeDeps,
  raw: Uint8Array,
  message: ReadMessage,
  id: string,
): Promise<EmailContent> {
  const store = deps.content;
  if (!store) throw validationError('sending over SMTP needs the content store, which is not set up');
  const key = mimeKey(id);
  await store.put(key, raw, 'message/rfc822');
  const attachments = message.files.map((file, index) => ({ id: attachmentId(id, index), ...file.stored }));
  await Promise.all(
    message.files.map((file, index) =>
      store.put(attachmentKey(id, attachmentId(id, index)), file.bytes, file.stored.content_type),
    ),
  );
  return withLargeBodiesStored(
    store,
    {
      from: shown(message.from.name, message.from.email),
      ...addressed(message),
      headers: {},
      ...(attachments.length ? { attachments } : {}),
      mime: { key, size: raw.length, ...(message.messageId ? { message_id: message.messageId } : {}) },
    },
    id,
  );
}
