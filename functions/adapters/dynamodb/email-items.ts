import { createHash } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { EmailContent, EmailEvent, EmailSummary } from '../../emails/email.js';
import { type EmailState, type SuppressedRecipients, suppressedPositions } from '../../emails/ports.js';
import { type SuppressedReason, WITHHELD_REASONS } from '../../emails/recipients.js';
import { type EmailStatus, lastEventOf, type RecipientTally } from '../../emails/status.js';
import { batchGetAll } from './client.js';
import { DUE_INDEX, keys } from './table.js';

/**
 * An email's items (status, summary, bodies, events) and the domain values they hold: what is
 * written where, and read back as what. The repository (email-repository.ts) decides when; the
 * sweeper's store reads states and content through the same functions.
 */

type Item = Record<string, unknown>;

/**
 * Suppressed recipients settled in a claim or a final change: counted as done and (those on the
 * suppression list) lost, and kept
 * by reason (number sets of positions, so a repeat counts once), with when, and the mark
 * `last_event` reads. The status item holds all of it: a recipient's own status needs no other item.
 */
export function suppressedMarks(suppressed?: SuppressedRecipients) {
  const all = suppressed ? suppressedPositions(suppressed) : [];
  if (!suppressed || all.length === 0) return { set: '', add: '', values: {} };
  const values: Item = { ':supTrue': true, ':supAt': suppressed.at, ':supAll': new Set(all) };
  const add = ['done :supAll'];
  // A recipient the send gate withheld (its own choice for the topic) is settled but not lost: it
  // makes no email `bounced` whose other recipients got it.
  const lost = Object.entries(suppressed.byReason)
    .filter(([reason]) => !(WITHHELD_REASONS as readonly string[]).includes(reason))
    .flatMap(([, positions]) => positions ?? []);
  if (lost.length) {
    values[':supLost'] = new Set(lost);
    add.push('lost :supLost');
  }
  for (const [reason, positions] of Object.entries(suppressed.byReason)) {
    if (!positions?.length) continue;
    const attr = SUPPRESSED_SETS[reason as SuppressedReason];
    values[`:${attr}`] = new Set(positions);
    add.push(`${attr} :${attr}`);
  }
  return {
    set: ', suppressed = :supTrue, suppressed_at = if_not_exists(suppressed_at, :supAt)',
    add: ` ADD ${add.join(', ')}`,
    values,
  };
}

/** The status item's set of suppressed positions for each reason. */
export const SUPPRESSED_SETS: Record<SuppressedReason, string> = {
  previous_bounce: 'sup_bounce',
  previous_complaint: 'sup_complaint',
  manual: 'sup_manual',
  // Withheld by the send gate (an email with topic_id).
  unsubscribed: 'sup_unsub',
  topic_opted_out: 'sup_topic_out',
  topic_default_opt_out: 'sup_topic_default',
  topic_deleted: 'sup_topic_gone',
};

/** Which positions were left out as suppressed, and why, from the status item. */
export function suppressedOf(item: Item): Map<number, SuppressedReason> {
  const found = new Map<number, SuppressedReason>();
  for (const [reason, attr] of Object.entries(SUPPRESSED_SETS))
    if (item[attr] instanceof Set)
      for (const position of item[attr] as Set<number>)
        found.set(Number(position), reason as SuppressedReason);
  return found;
}

/** What the status item counts of the recipients (an email stored before counting had no `rcpts`). */
export function tallyOf(item: Item): RecipientTally {
  const size = (value: unknown) => (value instanceof Set ? value.size : 0);
  return {
    total: typeof item.rcpts === 'number' ? item.rcpts : 0,
    done: size(item.done),
    lost: size(item.lost),
  };
}

/**
 * Bodies of more than this many bytes are kept deflated in the body item (attribute `z`, binary):
 * an email's HTML shrinks three to ten times, and the item's write units with it (one per KB).
 */
export const DEFLATE_BODIES_OVER_BYTES = 1024;

/**
 * The body item's attributes for these bodies: as they are, or (with `deflate`) deflated together
 * when that is smaller.
 */
export function storedBodies(html: string | null, text: string | null, deflate = true): Item {
  const plain = { html, text };
  if (!deflate || Buffer.byteLength(html ?? '') + Buffer.byteLength(text ?? '') <= DEFLATE_BODIES_OVER_BYTES)
    return plain;
  const z = deflateRawSync(JSON.stringify(plain));
  return z.byteLength < Buffer.byteLength(html ?? '') + Buffer.byteLength(text ?? '') ? { z } : plain;
}

/** The bodies of a body item, deflated or not (items stored before bodies were deflated have none). */
export function bodiesOf(item: Item): { html: string | null; text: string | null } {
  if (item.z instanceof Uint8Array) {
    const { html, text } = JSON.parse(inflateRawSync(item.z).toString('utf8')) as {
      html: string | null;
      text: string | null;
    };
    return { html: html ?? null, text: text ?? null };
  }
  return {
    html: (item.html as string | null | undefined) ?? null,
    text: (item.text as string | null | undefined) ?? null,
  };
}

/** Tags, headers, attachments and where large bodies are live in the body item, only when set. */
export const extras = ({
  tags,
  headers,
  attachments,
  body_key,
  template,
  topic_id,
  mime,
}: Pick<
  EmailContent,
  'tags' | 'headers' | 'attachments' | 'body_key' | 'template' | 'topic_id' | 'mime'
>) => ({
  ...(tags.length ? { tags } : {}),
  ...(Object.keys(headers).length ? { headers } : {}),
  ...(attachments?.length ? { attachments } : {}),
  ...(body_key ? { body_key } : {}),
  ...(template ? { template } : {}),
  ...(topic_id ? { topic_id } : {}),
  ...(mime ? { mime } : {}),
});

export const extrasOf = (
  body: Item,
): Pick<
  EmailContent,
  'tags' | 'headers' | 'attachments' | 'body_key' | 'template' | 'topic_id' | 'mime'
> => ({
  tags: (body.tags as EmailContent['tags'] | undefined) ?? [],
  headers: (body.headers as EmailContent['headers'] | undefined) ?? {},
  ...(body.attachments ? { attachments: body.attachments as EmailContent['attachments'] } : {}),
  ...(body.body_key ? { body_key: String(body.body_key) } : {}),
  ...(body.template ? { template: body.template as EmailContent['template'] } : {}),
  ...(typeof body.topic_id === 'string' ? { topic_id: body.topic_id } : {}),
  // An SMTP email's message (issue 42), on its body item with the rest of what is not listed.
  ...(body.mime ? { mime: body.mime as EmailContent['mime'] } : {}),
});

/** Failure reasons are bounded so the status item stays small (one write unit per change). */
export const bounded = (text: string) => text.slice(0, 200);

/**
 * The status item attribute holding the event that settled a one-recipient email, and the most it
 * may take (a larger one, with a long bounce diagnostic, is an item of its own): the item stays
 * under 1 KB even for a scheduled email with the longest failure reason (a test holds it to that),
 * so each of its changes is one write unit.
 */
export const INLINE_EVENT = 'ev';
export const INLINE_EVENT_MAX_BYTES = 300;

/** What makes two records of an event the same event (the sort key of its own item). */
export const eventKey = (event: EmailEvent) => keys.event(event.at, event.type, eventDigest(event));

/**
 * What tells one event from another of the same type and millisecond: whom it concerns and what it
 * says; for an open or click also by which agent and address (two readers, or a reader and a
 * proxy). Events without those keep the digest they always had.
 */
const eventDigest = (event: EmailEvent) =>
  createHash('sha256')
    .update(
      JSON.stringify([
        event.type,
        [...event.recipients].sort(),
        event.detail ?? '',
        ...(event.user_agent || event.ip_address ? [event.user_agent ?? '', event.ip_address ?? ''] : []),
      ]),
    )
    .digest('hex')
    .slice(0, 16);

export function toState(id: string, item: Item): EmailState {
  const state: EmailState = { id, status: item.status as EmailStatus, created_at: String(item.created_at) };
  if (item.sent_at) state.sent_at = String(item.sent_at);
  if (typeof item.send_started_at === 'number') state.send_started_at = item.send_started_at;
  if (typeof item.claim === 'string') state.claim_mark = item.claim;
  if (item.attempt_error) state.attempt_error = String(item.attempt_error);
  if (typeof item.requeued_at === 'number') state.requeued_at = item.requeued_at;
  if (typeof item.refused_at === 'number') state.refused_at = item.refused_at;
  if (item.scheduled_at) state.scheduled_at = String(item.scheduled_at);
  if (item.key_id) state.key_id = String(item.key_id);
  if (item.dispatched) state.dispatched = String(item.dispatched);
  if (item[DUE_INDEX.partitionKey]) state.due_indexed = true;
  if (item.canceled === true) state.canceled = true;
  if (typeof item.rcpts === 'number') state.tally = tallyOf(item);
  return state;
}

export function toSummary(id: string, status: Item, summary: Item): EmailSummary {
  return {
    id,
    status: status.status as EmailStatus,
    last_event: lastEventOf({
      status: status.status as EmailStatus,
      sent: Boolean(status.sent_at),
      delayed: status.delayed === true,
      complained: status.complained === true,
      delivered: status.delivered === true,
      bounced: status.bounced === true,
      suppressed: status.suppressed === true,
      scheduled: Boolean(status.scheduled_at),
      canceled: status.canceled === true,
      opened: status.opened === true,
      clicked: status.clicked === true,
    }),
    scheduled_at: (status.scheduled_at as string | undefined) ?? null,
    message_id: (status.provider_message_id as string | undefined) ?? null,
    created_at: String(status.created_at),
    from: String(summary.from),
    to: (summary.to as string[] | undefined) ?? [],
    cc: (summary.cc as string[] | undefined) ?? [],
    bcc: (summary.bcc as string[] | undefined) ?? [],
    reply_to: (summary.reply_to as string[] | undefined) ?? [],
    subject: String(summary.subject),
  };
}

/** Status items of these emails, 100 keys a read (missing ones left out). */
export async function readStates(db: DynamoDBDocumentClient, tableName: string, ids: string[]) {
  const keyList = ids.map((id) => ({ pk: keys.email(id), sk: keys.status }));
  const items = await batchGetAll(db, tableName, keyList, undefined, true);
  return items.map((item) => toState(keys.idOf(String(item.pk)), item));
}

/** An email's content: its summary and body items, in one batch read. */
export async function readContent(
  db: DynamoDBDocumentClient,
  tableName: string,
  id: string,
): Promise<EmailContent | null> {
  // Strongly consistent: the consumer reads a job that came as a reference moments after it was
  // stored, and an eventually consistent read may miss the summary (the email would be skipped)
  // or the body (it would go out without its bodies and tags).
  const items = await batchGetAll(
    db,
    tableName,
    [
      { pk: keys.email(id), sk: keys.summary },
      { pk: keys.email(id), sk: keys.body },
    ],
    undefined,
    true,
  );
  const summary = items.find((item) => item.sk === keys.summary);
  if (!summary) return null;
  const body: Item = items.find((item) => item.sk === keys.body) ?? {};
  const list = (value: unknown) => (value as string[] | undefined) ?? [];
  return {
    from: String(summary.from),
    to: list(summary.to),
    cc: list(summary.cc),
    bcc: list(summary.bcc),
    reply_to: list(summary.reply_to),
    subject: String(summary.subject),
    ...bodiesOf(body),
    ...extrasOf(body),
    // Kept on the summary as created (a broadcast's email): the sweeper routes it back to its lane,
    // and its endings tell the broadcast's tally.
    ...(typeof summary.broadcast_id === 'string' ? { broadcast_id: summary.broadcast_id } : {}),
  };
}
