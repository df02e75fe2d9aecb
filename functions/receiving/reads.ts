import * as z from 'zod/mini';
import { notFound, validationError } from '../shared/errors.js';
import { UUID } from '../shared/ids.js';
import { bothCursors, DEFAULT_LIMIT, MAX_LIMIT, queryInteger } from '../shared/list.js';
import { cidReferences, dataUriChars, imageType, normalizeContentId, withDataUris } from './inline-images.js';
import { attachmentKey, type ReceivedAttachment, type ReceivedEmail, rawKey } from './model.js';
import type { ReceivedEmailRepository, ReceivedMailStore } from './ports.js';

/**
 * Reading received mail: the four receiving routes' use cases (`GET /v1/emails/receiving…`), in
 * Resend's shapes, with our verdicts beside them. Download links (the raw message, each attachment)
 * are presigned GETs answered as a download, valid RECEIVED_LINK_SECONDS.
 */

/** How long a download link stays valid (Resend's: about an hour), or less where what signs it expires first. */
export const RECEIVED_LINK_SECONDS = 3600;

/**
 * At most this many bytes of bodies and headers (inlined images included) in one answer, as the
 * function returns them: JSON inside API Gateway's proxy result, so escaped twice. Lambda answers a
 * synchronous invocation with at most 6 MB; the rest of the answer stays well under the margin. An
 * image beyond it keeps its `cid:` URL; bodies beyond it are left out (`bodies_too_large`), and the
 * raw message has them.
 */
export const MAX_ANSWER_BODIES_BYTES = 5 * 1024 * 1024;

/** The bytes these parts take in the function's answer (escaped twice: the body, then the proxy result). */
export const answerBytes = (parts: unknown) => Buffer.byteLength(JSON.stringify(JSON.stringify(parts)));

export interface ReceivedReadDeps {
  received: Pick<ReceivedEmailRepository, 'get' | 'list'>;
  /**
   * The setting RECEIVED_VIRUS_DOWNLOADS: true lets mail SES flagged as carrying a virus offer its
   * raw message and attachments for download (and its images inline). Default false.
   */
  virusDownloads?: boolean;
}

export interface ReceivedContentDeps extends ReceivedReadDeps {
  mail: Pick<ReceivedMailStore, 'getParsed' | 'getAttachment' | 'downloadLink'>;
}

// The queries.

const uuidCursor = (field: string, what: string) =>
  z.optional(z.string().check(z.refine((s) => UUID.test(s), `${field} must be the id (a UUID) of ${what}`)));

const oneCursor = z.superRefine((query: { after?: string; before?: string }, ctx) => {
  if (query.after !== undefined && query.before !== undefined) ctx.issues.push(bothCursors(query.before));
});

/** `GET /v1/emails/receiving`: `limit` (1–100, default 20) and a cursor (`after` or `before`, a received email's id). */
export const listReceivedEmailsQuerySchema = z.pipe(
  z
    .strictObject({
      limit: z._default(queryInteger('limit', 1, MAX_LIMIT), DEFAULT_LIMIT),
      after: uuidCursor('after', 'a listed received email'),
      before: uuidCursor('before', 'a listed received email'),
    })
    .check(oneCursor),
  z.transform((query) => ({ ...query, offset: 0 })),
);
export type ListReceivedEmailsQuery = z.output<typeof listReceivedEmailsQuerySchema>;

/** `GET /v1/emails/receiving/{id}/attachments`: all of them in the message's order, or `limit` (1–100) after or before one. */
export const listReceivedAttachmentsQuerySchema = z
  .strictObject({
    limit: z.optional(queryInteger('limit', 1, MAX_LIMIT)),
    after: uuidCursor('after', 'one of its attachments'),
    before: uuidCursor('before', 'one of its attachments'),
  })
  .check(oneCursor);
export type ListReceivedAttachmentsQuery = z.output<typeof listReceivedAttachmentsQuerySchema>;

export const HTML_FORMATS = ['data_uri', 'cid'] as const;
export type HtmlFormat = (typeof HTML_FORMATS)[number];

/** `GET /v1/emails/receiving/{id}`: `html_format` (`data_uri`, the default, or `cid`). */
export const getReceivedEmailQuerySchema = z.strictObject({
  html_format: z._default(
    z.enum(HTML_FORMATS, { error: `html_format must be one of ${HTML_FORMATS.join(', ')}` }),
    'data_uri',
  ),
});

// The answers' parts.

/** Mail SES flagged as carrying a virus offers no download, unless the operator's setting allows it. */
export const downloadsWithheld = (deps: ReceivedReadDeps, email: ReceivedEmail) =>
  email.virus === 'fail' && deps.virusDownloads !== true;

/**
 * An attachment as a received email lists it (Resend's): `content_id` left out where there is none,
 * as Resend's document types it a string.
 */
export const toAttachmentSummary = (a: ReceivedAttachment) => ({
  id: a.id,
  filename: a.filename,
  content_type: a.content_type,
  ...(a.content_id !== null ? { content_id: a.content_id } : {}),
  content_disposition: a.content_disposition,
  size: a.size,
});

/** What the list and the email show alike: Resend's fields, `received_for`, and ours (verdicts, threading). */
export const toReceivedSummary = (email: ReceivedEmail) => ({
  id: email.id,
  created_at: email.created_at,
  from: email.from,
  to: email.to,
  cc: email.cc,
  bcc: email.bcc,
  reply_to: email.reply_to,
  received_for: email.received_for,
  subject: email.subject,
  message_id: email.message_id,
  in_reply_to: email.in_reply_to,
  references: email.references,
  attachments: email.attachments.map(toAttachmentSummary),
  authentication: email.authentication,
  spam: email.spam,
  virus: email.virus,
  ...(email.parse_error !== undefined ? { parse_error: email.parse_error } : {}),
  ...(email.truncated ? { truncated: true as const } : {}),
});

const isId = (value: string) => UUID.test(value);

async function receivedEmail(deps: ReceivedReadDeps, id: string): Promise<ReceivedEmail> {
  // Ids are UUIDs: anything else names no received email (a 404, without a read).
  const email = isId(id) ? await deps.received.get(id) : null;
  if (!email) throw notFound(`Received email ${JSON.stringify(id)} not found.`);
  return email;
}

// The use cases.

/** `GET /v1/emails/receiving`: newest first, a page from the start or from a cursor. */
export async function listReceivedEmails(deps: ReceivedReadDeps, query: ListReceivedEmailsQuery) {
  const page = await deps.received.list(query);
  return { object: 'list' as const, has_more: page.has_more, data: page.data.map(toReceivedSummary) };
}

/**
 * `GET /v1/emails/receiving/{id}`: the email with its bodies and headers (from the content bucket),
 * the raw message's download link (`raw: null` where downloads are withheld), and with
 * `html_format=data_uri` its inline images as `data:` URIs, as far as MAX_ANSWER_BODIES_BYTES allows.
 */
export async function getReceivedEmail(
  deps: ReceivedContentDeps,
  id: string,
  format: HtmlFormat = 'data_uri',
) {
  const email = await receivedEmail(deps, id);
  const withheld = downloadsWithheld(deps, email);
  const [parsed, raw] = await Promise.all([
    deps.mail.getParsed(email.id),
    withheld
      ? null
      : deps.mail.downloadLink(rawKey(email.ses_message_id), `${email.id}.eml`, RECEIVED_LINK_SECONDS),
  ]);
  let bodies = { html: parsed?.html ?? null, text: parsed?.text ?? null, headers: parsed?.headers ?? null };
  const tooLarge = answerBytes(bodies) > MAX_ANSWER_BODIES_BYTES;
  if (tooLarge) {
    bodies = { ...bodies, html: null, text: null };
    // Headers alone past it (a message of nothing but headers): left out too.
    if (answerBytes(bodies) > MAX_ANSWER_BODIES_BYTES) bodies.headers = null;
  } else if (bodies.html !== null && format === 'data_uri' && !withheld)
    bodies.html = await inlineImages(deps, email, bodies.html, MAX_ANSWER_BODIES_BYTES - answerBytes(bodies));
  return {
    object: 'email' as const,
    ...toReceivedSummary(email),
    ...bodies,
    ...(tooLarge ? { bodies_too_large: true as const } : {}),
    raw,
  };
}

/** The html with the images it refers to by `cid:` inlined, in the order referred to, within `room` bytes. */
async function inlineImages(deps: ReceivedContentDeps, email: ReceivedEmail, html: string, room: number) {
  const referred = cidReferences(html);
  if (referred.length === 0) return html;
  const byCid = new Map<string, ReceivedAttachment>();
  for (const a of email.attachments)
    if (a.content_id !== null && imageType(a.content_type)) byCid.set(normalizeContentId(a.content_id), a);
  let left = room;
  const chosen: [string, ReceivedAttachment, string][] = [];
  for (const cid of referred) {
    const a = byCid.get(cid);
    const type = a && imageType(a.content_type);
    if (!a || !type) continue;
    // A data URI's characters need no escaping: each is one byte, however often it is escaped.
    const bytes = dataUriChars(type, a.size);
    if (bytes > left) continue;
    left -= bytes;
    chosen.push([cid, a, type]);
  }
  const images = new Map<string, { type: string; bytes: Uint8Array }>();
  await Promise.all(
    chosen.map(async ([cid, a, type]) => {
      const bytes = await deps.mail.getAttachment(email.id, a.id);
      if (bytes) images.set(cid, { type, bytes });
    }),
  );
  return withDataUris(html, images);
}

/**
 * An attachment as its own routes show it: with its download link, or without one (no
 * `download_url`, no `expires_at`) where the email's downloads are withheld.
 */
async function withLink(deps: ReceivedContentDeps, email: ReceivedEmail, a: ReceivedAttachment) {
  const link = downloadsWithheld(deps, email)
    ? null
    : await deps.mail.downloadLink(attachmentKey(email.id, a.id), a.filename ?? a.id, RECEIVED_LINK_SECONDS);
  return { object: 'attachment' as const, ...toAttachmentSummary(a), ...(link ?? {}) };
}

/**
 * `GET /v1/emails/receiving/{id}/attachments`: in the message's order, all of them or a page
 * (`limit`, after or before one of them). A cursor that is not one of them is a 400.
 */
export async function listReceivedAttachments(
  deps: ReceivedContentDeps,
  id: string,
  query: ListReceivedAttachmentsQuery = {},
) {
  const email = await receivedEmail(deps, id);
  const all = email.attachments;
  const cursor = query.after ?? query.before;
  const at = cursor === undefined ? -1 : all.findIndex((a) => a.id === cursor);
  const field = query.after !== undefined ? 'after' : 'before';
  if (cursor !== undefined && at < 0)
    throw validationError(`Invalid request: ${field} is not an attachment of received email ${email.id}`, [
      { field, message: 'not an attachment of this email' },
    ]);
  const limit = query.limit ?? all.length;
  const [start, end] =
    query.before !== undefined
      ? [Math.max(0, at - limit), at]
      : [at + 1, Math.min(all.length, at + 1 + limit)];
  return {
    object: 'list' as const,
    has_more: query.before !== undefined ? start > 0 : end < all.length,
    data: await Promise.all(all.slice(start, end).map((a) => withLink(deps, email, a))),
  };
}

/** `GET /v1/emails/receiving/{id}/attachments/{attachment_id}`. */
export async function getReceivedAttachment(deps: ReceivedContentDeps, id: string, attachmentId: string) {
  const email = await receivedEmail(deps, id);
  const attachment = isId(attachmentId) ? email.attachments.find((a) => a.id === attachmentId) : undefined;
  if (!attachment)
    throw notFound(`Attachment ${JSON.stringify(attachmentId)} not found on received email ${email.id}.`);
  return withLink(deps, email, attachment);
}
