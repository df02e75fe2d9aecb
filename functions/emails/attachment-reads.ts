import { notFound, validationError } from '../shared/errors.js';
import { isEmailId } from '../shared/ids.js';
import type { ContentStore } from '../shared/ports.js';
import {
  attachmentKey,
  DOWNLOAD_URL_SECONDS,
  type ListAttachmentsQuery,
  type StoredAttachment,
  toAttachmentBody,
} from './attachments.js';
import type { EmailRepository } from './ports.js';

export interface AttachmentDeps {
  emails: Pick<EmailRepository, 'getAttachments'>;
  content: ContentStore;
}

async function attachmentsOf(deps: AttachmentDeps, emailId: string): Promise<StoredAttachment[]> {
  const found = isEmailId(emailId) ? await deps.emails.getAttachments(emailId) : null;
  if (!found) throw notFound(`Email ${JSON.stringify(emailId)} not found.`);
  return found;
}

/**
 * An attachment as the API shows it, with a download link valid DOWNLOAD_URL_SECONDS, or until the
 * credentials that signed it expire when that is sooner (`expires_at` says which). A file given
 * by `path` has a size and a link once the consumer has fetched it (when the email was sent).
 */
async function withLink(deps: AttachmentDeps, emailId: string, attachment: StoredAttachment) {
  const key = attachmentKey(emailId, attachment.id);
  const size = attachment.size ?? (await deps.content.size(key));
  if (size === null) return toAttachmentBody(attachment, null);
  const link = await deps.content.downloadUrl(
    key,
    { filename: attachment.filename, contentType: attachment.content_type },
    DOWNLOAD_URL_SECONDS,
  );
  // When the link stops working, as its store says: sooner than asked when what signed it expires first.
  return toAttachmentBody(
    { ...attachment, size },
    { url: link.url, expires_at: link.expiresAt.toISOString() },
  );
}

/**
 * `GET /v1/emails/{id}/attachments`: the email's attachments in the order sent, all of them or a
 * page (`limit`, after or before one of them). A cursor that is not one of them is a 400.
 */
export async function listAttachments(
  deps: AttachmentDeps,
  emailId: string,
  query: ListAttachmentsQuery = {},
) {
  const all = await attachmentsOf(deps, emailId);
  const cursor = query.after ?? query.before;
  const at = cursor === undefined ? -1 : all.findIndex((a) => a.id === cursor);
  const field = query.after !== undefined ? 'after' : 'before';
  if (cursor !== undefined && at < 0)
    throw validationError(`Invalid request: ${field} is not an attachment of email ${emailId}`, [
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
    data: await Promise.all(all.slice(start, end).map((a) => withLink(deps, emailId, a))),
  };
}

/** `GET /v1/emails/{id}/attachments/{attachment_id}`. */
export async function getAttachment(deps: AttachmentDeps, emailId: string, attachmentId: string) {
  const attachment = (await attachmentsOf(deps, emailId)).find((a) => a.id === attachmentId);
  if (!attachment)
    throw notFound(`Attachment ${JSON.stringify(attachmentId)} not found on email ${emailId}.`);
  return withLink(deps, emailId, attachment);
}
