import { createHash } from 'node:crypto';
import { countMetrics } from '../metrics/count.js';
import type { MetricsCounter } from '../metrics/ports.js';
import { uuidV7Of } from '../shared/ids.js';
import type { Clock, Counters, Log } from '../shared/ports.js';
import type { WebhookEvent } from '../webhooks/model.js';
import type { EventPublisher } from '../webhooks/ports.js';
import { publishQuietly } from '../webhooks/publish.js';
import { Bounds, RECEIVED_LIMITS } from './bounds.js';
import type { Receipt } from './events.js';
import type { ReceivedAttachment, ReceivedEmail } from './model.js';
import { parseMessage } from './parse.js';
import type { ReceivedEmailRepository, ReceivedMailStore } from './ports.js';

/**
 * Receiving one message SES accepted (receive-email, for SES's Lambda action and the local SMTP
 * twin; sweep-received, for what that missed): its raw object read, parsed, each attachment put in
 * an object of its own and the bodies and headers in `parsed.json`, then the received email stored
 * once per SES message id, counted in the metrics (`received`), `email.received` published and the
 * email marked notified.
 *
 * Every step can be done again: the ids come from SES's message id (the same message makes the same
 * objects and the same item, so a retry after a crash rewrites what it wrote), the store keeps the
 * first email stored for a message id, and an email stored but not yet notified (a crash between
 * the two) is published when the message is handed over again. A message stored and notified is
 * left alone. What fails for good (the raw object never appears, S3 or the table refuse) throws:
 * SES's asynchronous invocation is retried by Lambda, then goes to the failure queue, which
 * sweep-received reads.
 */

export interface ReceiveDeps {
  received: ReceivedEmailRepository;
  mail: ReceivedMailStore;
  events?: EventPublisher;
  metrics?: MetricsCounter;
  clock: Clock;
  log?: Log;
  counters?: Counters;
  /**
   * How long to wait for the raw object: SES's S3 action comes before its Lambda action in the
   * rule, so the object is normally there; a read right after the write is retried briefly anyway.
   * @default { attempts: 5, pauseMs: 200 } (each pause twice the last)
   */
  rawWait?: { attempts: number; pauseMs: number };
  /** How a wait for the raw object pauses (tests pass one that does not wait). */
  pause?: (ms: number) => Promise<void>;
}

export interface ReceiveResult {
  email: ReceivedEmail;
  /** Stored by this call (false: SES handed it over before). */
  created: boolean;
  /** Published by this call. */
  published: boolean;
}

/** The received email's id for an SES message id: a UUIDv7 of its receipt time, the same on every retry. */
export const receivedIdOf = (sesMessageId: string, receivedAtMs: number) =>
  uuidV7Of(receivedAtMs, digest(`received\n${sesMessageId}`));

const attachmentIdOf = (sesMessageId: string, receivedAtMs: number, index: number) =>
  uuidV7Of(receivedAtMs, digest(`attachment\n${sesMessageId}\n${index}`));

const digest = (text: string) => createHash('sha256').update(text).digest();

export class RawMessageMissingError extends Error {
  constructor(readonly sesMessageId: string) {
    super(`no raw message at received/raw/${sesMessageId} yet`);
    this.name = 'RawMessageMissingError';
  }
}

export async function receive(deps: ReceiveDeps, receipt: Receipt): Promise<ReceiveResult> {
  const found = await deps.received.bySesMessageId(receipt.sesMessageId);
  const before = found && (await withRecipients(deps, found, receipt));
  if (before) {
    if (before.notified) return { email: before, created: false, published: false };
    await notify(deps, before);
    return { email: { ...before, notified: true }, created: false, published: true };
  }

  const raw = await readRaw(deps, receipt.sesMessageId);
  const receivedAtMs = Date.parse(receipt.receivedAt);
  const id = receivedIdOf(receipt.sesMessageId, receivedAtMs);
  const parsed = await parseMessage(raw);
  if (parsed.parse_error) {
    deps.counters?.count('ReceivedUnparsed');
    deps.log?.warn('received a message that does not parse; kept with what could be read', {
      ses_message_id: receipt.sesMessageId,
      error: parsed.parse_error,
    });
  }

  // What the item and the event hold is bounded (bounds.ts): the attachments beyond those listed
  // stay in the raw message, and the full headers are in parsed.json.
  const bound = new Bounds();
  const listed = bound.attachments(parsed.attachments);

  // The objects first, then the item: an email that can be read has its bodies and attachments.
  const attachments: ReceivedAttachment[] = [];
  for (const [index, attachment] of listed.entries()) {
    const { bytes, ...meta } = attachment;
    const attachmentId = attachmentIdOf(receipt.sesMessageId, receivedAtMs, index);
    await deps.mail.putAttachment(id, attachmentId, bytes, meta.content_type);
    attachments.push({ id: attachmentId, ...meta, size: bytes.length });
  }
  await deps.mail.putParsed(id, parsed.bodies);

  const email: ReceivedEmail = {
    id,
    ses_message_id: receipt.sesMessageId,
    created_at: receipt.receivedAt,
    from: bound.text(parsed.from ?? receipt.envelopeFrom ?? '', RECEIVED_LIMITS.address),
    to: bound.addresses(parsed.to),
    cc: bound.addresses(parsed.cc),
    bcc: bound.addresses(parsed.bcc),
    reply_to: bound.addresses(parsed.reply_to),
    received_for: bound.addresses(receipt.recipients),
    subject: bound.text(parsed.subject, RECEIVED_LIMITS.subject),
    message_id: bound.text(parsed.message_id ?? receipt.sesMessageId, RECEIVED_LIMITS.messageId),
    in_reply_to: bound.nullable(parsed.in_reply_to, RECEIVED_LIMITS.messageId),
    references: bound.references(parsed.references),
    attachments,
    authentication: receipt.authentication,
    spam: receipt.spam,
    virus: receipt.virus,
    size: raw.length,
    ...(parsed.parse_error
      ? { parse_error: bound.text(parsed.parse_error, RECEIVED_LIMITS.parseError) }
      : {}),
    notified: false,
  };
  if (bound.truncated) email.truncated = true;
  const stored = await deps.received.store(email);
  if (!stored.created) {
    stored.email = await withRecipients(deps, stored.email, receipt);
    // Another invocation stored it first (SES's retry, the sweep): it publishes, unless it failed to.
    if (stored.email.notified) return { email: stored.email, created: false, published: false };
  } else {
    deps.counters?.count('EmailsReceived');
    if (email.virus === 'fail') deps.counters?.count('ReceivedVirus');
    // Counted under the domain it was received for (the account's own), as a send is under its sender's.
    await countMetrics(deps, receipt.recipients[0] ?? email.to[0], { received: 1 }, id);
  }
  await notify(deps, stored.email);
  return { email: { ...stored.email, notified: true }, created: stored.created, published: true };
}

/**
 * The email with this receipt's recipients in its `received_for`: a message to domains of two of
 * our receipt rules comes once per rule (SES runs each matching rule's actions), each time with
 * that rule's recipients only. Published before it was notified, `email.received` has them all.
 */
async function withRecipients(
  deps: ReceiveDeps,
  email: ReceivedEmail,
  receipt: Receipt,
): Promise<ReceivedEmail> {
  if (receipt.recipients.every((r) => email.received_for.includes(r))) return email;
  return (await deps.received.addRecipients(email.id, receipt.recipients)) ?? email;
}

/** Publishes `email.received` (published or kept for a late publish: publishQuietly), then marks it. */
async function notify(deps: ReceiveDeps, email: ReceivedEmail): Promise<void> {
  await publishQuietly(deps, 'email.received', () => [receivedEvent(email)]);
  await deps.received.markNotified(email.id);
}

/** `email.received` in Resend's payload: metadata only (the bodies, headers and bytes are read by the API). */
export function receivedEvent(email: ReceivedEmail): WebhookEvent {
  return {
    type: 'email.received',
    // The email's time, not the publish's: a second publish (a retry after a crash between the
    // publish and its mark) is then the same message to each endpoint (webhooks/model.ts
    // messageId), which receivers deduplicate by its webhook-id.
    created_at: email.created_at,
    key: `email.received\n${email.id}`,
    data: {
      email_id: email.id,
      created_at: email.created_at,
      from: email.from,
      to: email.to,
      cc: email.cc,
      bcc: email.bcc,
      received_for: email.received_for,
      message_id: email.message_id,
      subject: email.subject,
      attachments: email.attachments.map((a) => ({
        id: a.id,
        filename: a.filename,
        content_type: a.content_type,
        content_disposition: a.content_disposition,
        content_id: a.content_id,
      })),
    },
  };
}

async function readRaw(deps: ReceiveDeps, sesMessageId: string): Promise<Uint8Array> {
  const { attempts, pauseMs } = deps.rawWait ?? { attempts: 5, pauseMs: 200 };
  const pause = deps.pause ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  for (let attempt = 1; ; attempt++) {
    const raw = await deps.mail.readRaw(sesMessageId);
    if (raw) return raw;
    if (attempt >= attempts) throw new RawMessageMissingError(sesMessageId);
    await pause(pauseMs * 2 ** (attempt - 1));
  }
}
