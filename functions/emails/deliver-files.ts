import { FetchError } from '../shared/ports.js';
import { attachmentKey, encodedBytes, MAX_MESSAGE_BYTES, messageBytes } from './attachments.js';
import type { DeliverDeps } from './deliver-deps.js';
import type { EmailContent } from './email.js';
import { messageAsSent } from './mime.js';
import type { OutgoingFile, QueuedJob, SendJob } from './ports.js';

/** Why an email cannot be sent as it stands; `temporary`: it may be sendable later. */
export interface Problem {
  reason: string;
  temporary: boolean;
}

/**
 * The job with its bodies: its content read back when the message carried only a reference, its
 * bodies from the content store when they are kept there. Null when the email does not exist.
 */
export async function withBodies(
  deps: DeliverDeps,
  queued: QueuedJob,
): Promise<SendJob | { problem: Problem } | null> {
  const content = queued.content ?? (await deps.emails.getContent(queued.id));
  if (!content) return null;
  // An SMTP email is sent as its MIME (loadMime): its parsed bodies are for the API only.
  if (!content.body_key || content.mime) return { id: queued.id, content };
  const bytes = deps.content ? await deps.content.get(content.body_key) : null;
  if (!bytes)
    return { problem: { reason: "the email's bodies are missing from the content store", temporary: false } };
  const bodies = JSON.parse(Buffer.from(bytes).toString('utf8')) as Pick<EmailContent, 'html' | 'text'>;
  const { body_key: _, ...rest } = content;
  return { id: queued.id, content: { ...rest, html: bodies.html ?? null, text: bodies.text ?? null } };
}

/**
 * The email's files, in order: from the content store, or fetched from their URL (then kept in the
 * store, so a retry or a download finds them) within what is left of SES's 40 MB.
 */
export async function loadFiles(deps: DeliverDeps, job: SendJob): Promise<OutgoingFile[] | Problem> {
  const attachments = job.content.attachments ?? [];
  const files: OutgoingFile[] = [];
  let total = messageBytes(job.content, []);
  for (const [index, attachment] of attachments.entries()) {
    const name = `attachment ${index} (${attachment.filename})`;
    if (!deps.content) return { reason: `${name}: no content store is configured`, temporary: false };
    const key = attachmentKey(job.id, attachment.id);
    let bytes = await deps.content.get(key);
    if (!bytes && attachment.path) {
      if (!deps.fetcher) return { reason: `${name}: fetching files is not configured`, temporary: false };
      // What the rest of the message leaves, in raw bytes (base64 takes 4 for 3).
      const budget = Math.max(0, Math.floor(((MAX_MESSAGE_BYTES - total) * 3) / 4));
      try {
        bytes = await deps.fetcher.fetch(attachment.path, budget);
      } catch (error) {
        const fetchError = error instanceof FetchError ? error : new FetchError(String(error), true);
        return {
          reason: `${name} could not be fetched from its path: ${fetchError.message}`,
          temporary: fetchError.temporary,
        };
      }
      await deps.content.put(key, bytes, attachment.content_type);
    }
    if (!bytes) return { reason: `${name} is missing from the content store`, temporary: false };
    total += encodedBytes(bytes.length) + 300;
    if (total > MAX_MESSAGE_BYTES)
      return {
        reason: `the message would be over SES's limit of ${MAX_MESSAGE_BYTES} bytes once encoded (at ${name})`,
        temporary: false,
      };
    files.push({
      filename: attachment.filename,
      content_type: attachment.content_type,
      disposition: attachment.content_disposition,
      content_id: attachment.content_id,
      bytes,
    });
  }
  return files;
}

/**
 * An SMTP email's message as SES is to get it (mime.ts messageAsSent), read from the content
 * store; its files are in it, never read as files.
 */
export async function loadMime(deps: DeliverDeps, job: SendJob): Promise<Uint8Array | Problem> {
  const key = job.content.mime?.key;
  if (!key) return { reason: 'the email has no message to send', temporary: false };
  if (!deps.content)
    return {
      reason: "the email's message is kept in the content store, and none is configured",
      temporary: false,
    };
  const bytes = await deps.content.get(key);
  if (!bytes) return { reason: "the email's message is missing from the content store", temporary: false };
  return messageAsSent(bytes, deps.clock.now());
}

/**
 * Emails with attachments are prepared and sent one at a time per container: one holds up to 40 MB
 * of files and, while SES is called, their base64 in the request (about 150 MB in all), so a batch
 * of them side by side could exhaust the function's memory.
 */
let heavyChain: Promise<unknown> = Promise.resolve();
export function heavy<T>(work: () => Promise<T>): Promise<T> {
  const run = heavyChain.then(work, work);
  heavyChain = run.catch(() => undefined);
  return run;
}
