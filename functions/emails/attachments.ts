import { createHash } from 'node:crypto';
import * as z from 'zod/mini';
import { queryInteger } from '../shared/list.js';

/**
 * Attachments of `POST /v1/emails` (Resend's `attachments`): `{filename, content | path,
 * content_type?, content_id?}`. Content comes in the three wire forms Resend's official SDKs send
 * (a base64 string; an array of byte values; `{"type": "Buffer", "data": [...]}`, which is how
 * `JSON.stringify` writes a Node Buffer), or as an `https` URL fetched when the email is sent.
 * Content is kept in the content store (S3) under the email, never in the table or a queue message.
 */

/** SES's limit on a whole message after encoding (base64 attachments, bodies, headers). */
export const MAX_MESSAGE_BYTES = 40 * 1024 * 1024;
/** At most this many attachments on one email. */
export const MAX_ATTACHMENTS = 100;
export const MAX_FILENAME_CHARS = 255;
/** Resend: a content id under 128 characters. */
export const MAX_CONTENT_ID_CHARS = 127;

/**
 * File types SES refuses to send (SES developer guide, "Unsupported attachment types"): refused
 * when the email is accepted, so the email is never accepted only to fail.
 */
export const REFUSED_EXTENSIONS = new Set(
  (
    'ade adp app asp bas bat cer chm cmd com cpl crt csh der exe fxp gadget hlp hta inf ins isp its ' +
    'js jse ksh lib lnk mad maf mag mam maq mar mas mat mau mav maw mda mdb mde mdt mdw mdz msc msh ' +
    'msh1 msh2 mshxml msh1xml msh2xml msi msp mst ops pcd pif plg prf prg reg scf scr sct shb shs sys ' +
    'ps1 ps1xml ps2 ps2xml psc1 psc2 tmp url vb vbe vbs vps vsmacros vss vst vsw vxd ws wsc wsf wsh xnk'
  ).split(' '),
);

/** An attachment as the request gave it, checked. */
export interface AttachmentInput {
  filename: string;
  /** The bytes, from `content`; absent for a `path` attachment. */
  content?: Uint8Array;
  /** An https URL fetched when the email is sent; absent for a `content` attachment. */
  path?: string;
  /** As given; absent: the filename's (`withContentTypes`, when the email is stored). */
  content_type?: string;
  content_id: string | null;
}

/** An attachment whose content type is known: given, or implied by its filename. */
export type TypedAttachment = AttachmentInput & { content_type: string };

/**
 * The attachments with a content type each: the one given, else the one the filename implies
 * (`application/octet-stream` when none does). The MIME table (content-types.ts) is loaded only
 * when an attachment needs it, so the many functions that read emails never load it.
 */
export async function withContentTypes(inputs: readonly AttachmentInput[]): Promise<TypedAttachment[]> {
  if (inputs.every((input) => input.content_type !== undefined)) return inputs as TypedAttachment[];
  const { contentTypeOf } = await import('./content-types.js');
  return inputs.map((input) => ({
    ...input,
    content_type: input.content_type ?? contentTypeOf(input.filename),
  }));
}

/** An attachment as stored with the email (its bytes are in the content store, at `attachmentKey`). */
export interface StoredAttachment {
  id: string;
  filename: string;
  content_type: string;
  content_disposition: 'attachment' | 'inline';
  content_id: string | null;
  /** Bytes; null for a `path` file not fetched yet. */
  size: number | null;
  /** The URL the file is fetched from when the email is sent (`path` attachments). */
  path?: string;
}

/** Where an attachment's bytes are kept in the content store. */
export const attachmentKey = (emailId: string, attachmentId: string) =>
  `attachments/${emailId}/${attachmentId}`;

/** Where an email's bodies are kept when they are too large for its table item. */
export const bodyKey = (emailId: string) => `bodies/${emailId}.json`;

/** Where an SMTP email's message is kept, as the client sent it (content.ts `mime`). */
export const mimeKey = (emailId: string) => `bodies/${emailId}.eml`;

/**
 * An attachment's id: the same for the same email and position, so a request resumed under the
 * same email id (Idempotency-Key) stores its files under the same keys. UUID-shaped, as Resend's.
 */
export function attachmentId(emailId: string, index: number): string {
  const hex = createHash('sha256').update(`${emailId}#${index}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
const CONTROL = /[\u0000-\u001f\u007f]/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const CONTENT_TYPE =
  /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+(?:\s*;\s*[a-z0-9!#$&^_.+-]+=(?:[a-z0-9!#$&^_.+-]+|"[^"\r\n]*"))*$/i;

export const extensionOf = (filename: string) => {
  const dot = filename.lastIndexOf('.');
  return dot < 0 ? '' : filename.slice(dot + 1).toLowerCase();
};

/** Why a filename cannot be used, or undefined. */
export function filenameProblem(filename: string): string | undefined {
  if (filename.trim() === '') return 'must not be empty';
  if ([...filename].length > MAX_FILENAME_CHARS) return `may be at most ${MAX_FILENAME_CHARS} characters`;
  if (CONTROL.test(filename)) return 'must not contain control characters';
  if (/[/\\]/.test(filename) || filename === '.' || filename === '..')
    return 'must be a file name, not a path (no / or \\)';
  if (REFUSED_EXTENSIONS.has(extensionOf(filename)))
    return `is a .${extensionOf(filename)} file, a type SES does not send`;
  return undefined;
}

/** The bytes of `content` in any of the SDKs' wire forms, or why they cannot be read. */
export function decodeContent(value: unknown): Uint8Array | string {
  if (typeof value === 'string') {
    const compact = value.replace(/\s+/g, '');
    if (compact.length % 4 === 1 || !BASE64.test(compact.replace(/-/g, '+').replace(/_/g, '/')))
      return 'must be base64 (or an array of bytes)';
    return new Uint8Array(Buffer.from(compact, 'base64'));
  }
  const bytes = Array.isArray(value)
    ? value
    : value && typeof value === 'object' && (value as { type?: unknown }).type === 'Buffer'
      ? (value as { data?: unknown }).data
      : undefined;
  if (!Array.isArray(bytes)) return 'must be base64, an array of bytes, or {"type": "Buffer", "data": [...]}';
  const out = new Uint8Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (typeof byte !== 'number' || !Number.isInteger(byte) || byte < 0 || byte > 255)
      return `must hold bytes (integers 0 to 255); item ${i} is not one`;
    out[i] = byte;
  }
  return out;
}

const FIELDS = new Set(['filename', 'content', 'path', 'content_type', 'content_id']);

/** One attachment of the request, checked; problems are pushed with their path under it. */
function parseAttachment(
  value: unknown,
  problem: (message: string, path?: string) => void,
): AttachmentInput | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    problem('must be an object {filename, content | path, content_type?, content_id?}');
    return undefined;
  }
  const entry = value as Record<string, unknown>;
  const unknownField = Object.keys(entry).find((key) => !FIELDS.has(key));
  if (unknownField) problem(`has an unknown field "${unknownField}"`, unknownField);
  let ok = !unknownField;
  const { filename, content, path, content_type, content_id } = entry;
  if (typeof filename !== 'string') {
    problem('filename is required and must be a string', 'filename');
    ok = false;
  } else {
    const bad = filenameProblem(filename);
    if (bad) {
      problem(`filename ${bad}`, 'filename');
      ok = false;
    }
  }
  const hasContent = content !== undefined && content !== null;
  const hasPath = path !== undefined && path !== null;
  if (hasContent === hasPath) {
    problem(hasContent ? 'give either content or path, not both' : 'needs content or path');
    return undefined;
  }
  let bytes: Uint8Array | undefined;
  if (hasContent) {
    const decoded = decodeContent(content);
    if (typeof decoded === 'string') {
      problem(`content ${decoded}`, 'content');
      ok = false;
    } else bytes = decoded;
  } else if (typeof path !== 'string') {
    problem('path must be a string with an https URL', 'path');
    ok = false;
  }
  let type: string | undefined;
  if (content_type !== undefined && content_type !== null) {
    if (typeof content_type !== 'string' || !CONTENT_TYPE.test(content_type) || content_type.length > 255) {
      problem('content_type must be a MIME type such as application/pdf', 'content_type');
      ok = false;
    } else type = content_type;
  }
  let cid: string | null = null;
  if (content_id !== undefined && content_id !== null) {
    if (
      typeof content_id !== 'string' ||
      content_id.length === 0 ||
      content_id.length > MAX_CONTENT_ID_CHARS ||
      !/^[!-~]+$/.test(content_id) ||
      /[<>"]/.test(content_id)
    ) {
      problem(
        `content_id must be 1 to ${MAX_CONTENT_ID_CHARS} printable ASCII characters without spaces, <, > or "`,
        'content_id',
      );
      ok = false;
    } else cid = content_id;
  }
  if (!ok) return undefined;
  const name = filename as string;
  return {
    filename: name,
    ...(bytes ? { content: bytes } : { path: path as string }),
    ...(type !== undefined ? { content_type: type } : {}),
    content_id: cid,
  };
}

/**
 * The `attachments` field: a list of attachments, each checked; an error names the attachment by
 * its index (`attachments.2.filename`). The URL of a `path` is checked against the service's
 * target policy where the request is handled (see send-email's use case).
 */
export const attachmentsSchema = z
  .pipe(
    z.unknown(),
    z.transform((value: unknown, ctx) => {
      if (!Array.isArray(value)) {
        ctx.issues.push({ code: 'custom', message: 'attachments must be a list', input: value });
        return z.NEVER;
      }
      if (value.length > MAX_ATTACHMENTS) {
        ctx.issues.push({
          code: 'custom',
          message: `attachments may list at most ${MAX_ATTACHMENTS} files`,
          input: value,
        });
        return z.NEVER;
      }
      const out: AttachmentInput[] = [];
      const ids = new Set<string>();
      value.forEach((entry, index) => {
        const parsed = parseAttachment(entry, (message, field) =>
          ctx.issues.push({
            code: 'custom',
            message: `attachment ${index}: ${message}`,
            input: entry,
            path: field ? [index, field] : [index],
          }),
        );
        if (!parsed) return;
        if (parsed.content_id && ids.has(parsed.content_id))
          ctx.issues.push({
            code: 'custom',
            message: `attachment ${index}: content_id "${parsed.content_id}" is given twice`,
            input: entry,
            path: [index, 'content_id'],
          });
        if (parsed.content_id) ids.add(parsed.content_id);
        out.push(parsed);
      });
      return out;
    }),
  )
  .register(z.globalRegistry, {
    // What the OpenAPI document says (metadata only: the transform above is what checks it).
    type: 'array',
    maxItems: MAX_ATTACHMENTS,
    items: {
      type: 'object',
      properties: {
        filename: { type: 'string', minLength: 1, maxLength: MAX_FILENAME_CHARS },
        content: {
          description: 'The bytes: base64, an array of byte values, or `{"type": "Buffer", "data": [...]}`.',
          anyOf: [
            { type: 'string', contentEncoding: 'base64' },
            { type: 'array', items: { type: 'integer', minimum: 0, maximum: 255 } },
            {
              type: 'object',
              properties: {
                type: { const: 'Buffer' },
                data: { type: 'array', items: { type: 'integer', minimum: 0, maximum: 255 } },
              },
              required: ['type', 'data'],
            },
          ],
        },
        path: { type: 'string', description: 'An https URL, fetched when the email is sent.' },
        content_type: {
          type: 'string',
          maxLength: 255,
          description: "Default: from the filename's extension.",
        },
        content_id: {
          type: 'string',
          minLength: 1,
          maxLength: MAX_CONTENT_ID_CHARS,
          description: 'Makes it inline, referred to as `cid:<content_id>` in the html.',
        },
      },
      required: ['filename'],
      additionalProperties: false,
    },
    description: `Files, at most ${MAX_ATTACHMENTS}: each with \`content\` or \`path\` (not both). The whole message may be at most ${MAX_MESSAGE_BYTES / 1024 / 1024} MB once encoded; executable types SES refuses are refused.`,
  });

/** Bytes a part of this size takes in a MIME message: base64, in lines of 76 characters. */
export const encodedBytes = (size: number) => {
  const base64 = Math.ceil(size / 3) * 4;
  return base64 + Math.ceil(base64 / 76) * 2;
};

/** The message's size as SES counts it, near enough: bodies as UTF-8 plus each file encoded. */
export function messageBytes(
  bodies: { html: string | null; text: string | null },
  attachmentSizes: number[],
): number {
  return (
    Buffer.byteLength(bodies.html ?? '') +
    Buffer.byteLength(bodies.text ?? '') +
    attachmentSizes.reduce((sum, size) => sum + encodedBytes(size) + 300, 0)
  );
}

/** The `attachments` entries stored with an email, in order, with their ids. */
export function storedAttachments(emailId: string, inputs: readonly TypedAttachment[]): StoredAttachment[] {
  return inputs.map((input, index) => ({
    id: attachmentId(emailId, index),
    filename: input.filename,
    content_type: input.content_type,
    content_disposition: input.content_id ? 'inline' : 'attachment',
    content_id: input.content_id,
    size: input.content ? input.content.length : null,
    ...(input.path ? { path: input.path } : {}),
  }));
}

const ATTACHMENT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const attachmentCursor = (field: string) =>
  z.optional(
    z
      .string()
      .check(
        z.refine((s) => ATTACHMENT_ID.test(s), `${field} must be the id of one of the email's attachments`),
      ),
  );

/**
 * `GET /v1/emails/{id}/attachments`: all of them in the order sent (Resend: all when `limit` is
 * absent), or a page of `limit` after or before one of them.
 */
export const listAttachmentsQuerySchema = z
  .strictObject({
    limit: z.optional(queryInteger('limit', 1, MAX_ATTACHMENTS)),
    after: attachmentCursor('after'),
    before: attachmentCursor('before'),
  })
  .check(
    z.refine((q) => q.after === undefined || q.before === undefined, {
      message: 'give after or before, not both',
      path: ['before'],
    }),
  );
export type ListAttachmentsQuery = z.output<typeof listAttachmentsQuerySchema>;

/** How long a download link stays valid. */
export const DOWNLOAD_URL_SECONDS = 3600;

/**
 * Resend's attachment object. What we do not have is left out rather than `null` where Resend's
 * document says string or integer: `content_id` of a file that is not inline, and `size`,
 * `download_url` and `expires_at` of a file given by `path` that has not been fetched yet.
 */
export const toAttachmentBody = (
  attachment: StoredAttachment,
  download: { url: string; expires_at: string } | null,
) => ({
  object: 'attachment' as const,
  id: attachment.id,
  filename: attachment.filename,
  ...(attachment.size !== null ? { size: attachment.size } : {}),
  content_type: attachment.content_type,
  content_disposition: attachment.content_disposition,
  ...(attachment.content_id !== null ? { content_id: attachment.content_id } : {}),
  ...(download ? { download_url: download.url, expires_at: download.expires_at } : {}),
});
