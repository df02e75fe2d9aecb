import { isEmailId } from '../shared/ids.js';
import type { ContentStore } from '../shared/ports.js';
import type { EmailDetail } from './email.js';
import type { EmailRepository } from './ports.js';

/**
 * One email with its bodies, as GET /v1/emails/{id} and a share link's page show it: bodies kept in
 * the content store are read from there; once the bucket's retention removed them the email is
 * still read, without them (`bodiesExpired`). Null: no such email (or not an email id).
 */
export async function readEmail(
  deps: { emails: EmailRepository; content?: ContentStore },
  id: string,
): Promise<{ email: EmailDetail; bodiesExpired: boolean } | null> {
  const email = isEmailId(id) ? await deps.emails.get(id) : null;
  if (!email) return null;
  if (!email.body_key) return { email, bodiesExpired: false };
  const bytes = await deps.content?.get(email.body_key);
  const bodies = bytes
    ? (JSON.parse(Buffer.from(bytes).toString('utf8')) as Pick<EmailDetail, 'html' | 'text'>)
    : null;
  return {
    email: { ...email, html: bodies?.html ?? null, text: bodies?.text ?? null },
    bodiesExpired: !bytes,
  };
}
