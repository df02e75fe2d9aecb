import type { AudienceReads } from '../contacts/reads.js';
import type { SenderOptions } from '../domains/model.js';
import type { UnsubscribeLinks } from '../unsubscribe/links.js';
import { leftOut, type Suppressed } from './deliver-suppressed.js';
import type { EmailContent } from './email.js';
import { type Mailer, MailerError, type OutgoingFile, type SendJob } from './ports.js';
import { addressKey, recipientsOf, type SuppressedReason, type WithheldReason } from './recipients.js';

/**
 * The send gate: an email with `topic_id` goes only to the recipients whose choice for the topic lets
 * it, judged when it is handed to SES (so a scheduled email honours an opt-out made before it was
 * due), and each of them gets a message of its own with its own one-click unsubscribe link (RFC 8058).
 * An email without `topic_id` reads nothing here, but for a broadcast's (`broadcast_id`, the lane's:
 * emails/broadcast-lane.ts): a contact unsubscribed from everything is withheld at handover too (it
 * may have unsubscribed after the fan-out made its email), and each gets `List-Unsubscribe` with
 * its own link (the topic's, or without a topic a global one) and `List-Unsubscribe-Post`.
 */
export interface GateDeps {
  /** The contacts, their choices and the topics (absent: an email with topic_id cannot be sent). */
  audience?: Pick<AudienceReads, 'topic' | 'contactsByAddresses' | 'choicesFor'>;
  /** Each recipient's unsubscribe link (absent: an email with topic_id cannot be sent). */
  unsubscribeLinks?: UnsubscribeLinks;
}

/**
 * Why the topic withholds each address (absent: it may have the email). A contact unsubscribed from
 * everything gets none (our choice: Resend's document speaks only of the topic); then its choice for
 * the topic decides; a recipient without a contact, or a contact without a choice, gets it only when
 * the topic's default is `opt_in`. A topic that no longer exists withholds every recipient: nobody's
 * choice for it can be known.
 */
export async function withheldBy(
  audience: NonNullable<GateDeps['audience']>,
  topicId: string,
  addresses: readonly string[],
): Promise<Map<string, WithheldReason>> {
  const unique = [...new Set(addresses.map(addressKey))];
  const [topic, contacts] = await Promise.all([
    audience.topic(topicId),
    unique.length ? audience.contactsByAddresses(unique) : new Map(),
  ]);
  const withheld = new Map<string, WithheldReason>();
  if (!topic) {
    for (const address of unique) withheld.set(address, 'topic_deleted');
    return withheld;
  }
  const asked = [...contacts.values()].filter((c) => !c.unsubscribed).map((c) => c.id);
  const choices = asked.length ? await audience.choicesFor(topic.id, asked) : new Map();
  for (const address of unique) {
    const contact = contacts.get(address);
    if (contact?.unsubscribed) {
      withheld.set(address, 'unsubscribed');
      continue;
    }
    const choice = contact ? choices.get(contact.id)?.subscription : undefined;
    if (choice === 'opt_out') withheld.set(address, 'topic_opted_out');
    else if (!choice && topic.default_subscription !== 'opt_in')
      withheld.set(address, 'topic_default_opt_out');
  }
  return withheld;
}

/**
 * The recipients left out of an email with `topic_id`: those on the suppression list (`listed`, kept
 * with their reason) and those the topic withholds. Without `topic_id`: `listed` as it is.
 */
export async function gated(deps: GateDeps, content: EmailContent, listed: Suppressed): Promise<Suppressed> {
  if (!content.topic_id && !content.broadcast_id) return listed;
  if (!deps.audience)
    throw new Error('an email with topic_id or broadcast_id needs the audience to be read; none is wired');
  const recipients = recipientsOf(content);
  const open = recipients.filter((_, i) => !listed.positions.includes(i)).map((r) => r.email);
  const withheld = content.topic_id
    ? await withheldBy(deps.audience, content.topic_id, open)
    : await unsubscribedAmong(deps.audience, open);
  const listedReason = new Map<number, SuppressedReason>();
  for (const [reason, positions] of Object.entries(listed.byReason))
    for (const position of positions ?? []) listedReason.set(position, reason as SuppressedReason);
  return leftOut(
    recipients,
    (recipient, position) => listedReason.get(position) ?? withheld.get(recipient.email),
  );
}

/**
 * The contacts among these addresses unsubscribed from everything (a broadcast email without a
 * topic: nothing else withholds it; an address with no contact is not withheld).
 */
async function unsubscribedAmong(
  audience: NonNullable<GateDeps['audience']>,
  addresses: readonly string[],
): Promise<Map<string, WithheldReason>> {
  const unique = [...new Set(addresses.map(addressKey))];
  const contacts = unique.length ? await audience.contactsByAddresses(unique) : new Map();
  const withheld = new Map<string, WithheldReason>();
  for (const address of unique)
    if (contacts.get(address)?.unsubscribed) withheld.set(address, 'unsubscribed');
  return withheld;
}

/**
 * Each remaining recipient's unsubscribe link, by address (read before the claim): an email with
 * `topic_id` (the topic's links) or a broadcast's (without a topic, global ones). Undefined: neither.
 */
export async function unsubscribeUrls(
  deps: GateDeps,
  job: SendJob,
): Promise<Map<string, string> | undefined> {
  const topicId = job.content.topic_id ?? (job.content.broadcast_id ? null : undefined);
  if (topicId === undefined) return undefined;
  if (!deps.unsubscribeLinks)
    throw new Error('an email with topic_id or broadcast_id needs unsubscribe links; none are wired');
  const links = deps.unsubscribeLinks;
  const addresses = [...new Set(recipientsOf(job.content).map((r) => r.email))];
  const urls = await Promise.all(
    addresses.map((address) => links.url({ address, topicId, emailId: job.id })),
  );
  return new Map(addresses.map((address, i) => [address, urls[i] as string]));
}

type Outgoing = SendJob & { files?: OutgoingFile[]; sender?: SenderOptions };

/**
 * The message of one recipient: addressed to it alone (`To`, whatever list it was on: the others
 * of the email are not shown to it, as on any list mail), with `List-Unsubscribe` first, then
 * `List-Unsubscribe-Post`, then the headers given.
 */
export const messageFor = (job: Outgoing, address: string, url: string): Outgoing => ({
  ...job,
  content: {
    ...job.content,
    to: [recipientLine(job.content, address)],
    cc: [],
    bcc: [],
    headers: {
      'List-Unsubscribe': `<${url}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      ...job.content.headers,
    },
  },
});

/** The address as the email gave it (with its name), for its own message. */
const recipientLine = (content: EmailContent, address: string): string =>
  [...content.to, ...content.cc, ...content.bcc].find((line) => addressKey(line) === address) ?? address;

/** A recipient whose own message SES did not take (after the first one, which it did). */
export interface Unsent {
  email: string;
  reason: string;
  /** SES may have taken it (no answer, a 5xx): not a failure to record, SES's events will tell. */
  unknown?: boolean;
}

/** How the messages after the first are paced and retried (deliver.ts passes the invocation's). */
export interface EachOptions {
  /** The time between two recipients at the account's paced rate (0 without pacing). */
  spacingMs: number;
  /** When the first message's slot began (ms): message i goes at `startAt + i × spacingMs`. */
  startAt: number;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  /** Whether a send started after waiting `ms` more still ends within the invocation. */
  fits: (ms: number) => boolean;
}

/** A message SES refused without taking it because of its rate (or for now) is tried this many times in all. */
export const EACH_TRIES = 4;
/** The first retry waits this long, each next twice as long (SES's rate is per second). */
export const EACH_BACKOFF_MS = 250;

/** Errors after which SES surely did not take the message, and a moment later it may. */
const retriable = (error: unknown) =>
  error instanceof MailerError &&
  (error.kind === 'rate' || error.kind === 'refused' || error.kind === 'unreached');

/**
 * Hands an email with `topic_id` to SES as one message per recipient, under the email's one claim.
 * The first message decides as a single send does (its error is thrown, and nothing was taken);
 * once SES has taken it, the email is sent, and the others go in order, each at its own slot of
 * the schedule the email booked (one per recipient, at the account's rate), each at most once.
 * One SES refuses without taking it (a throttle, a refusal for now, no connection) is tried again
 * after a backoff, up to EACH_TRIES in all while the invocation's time allows; one it still did
 * not take, or rejected for good, is returned with why (deliver.ts records it as failed). One whose
 * outcome is unknown (SES may have it) is never sent again, and returned as unknown.
 */
export async function sendEach(
  mailer: Mailer,
  job: Outgoing,
  urls: Map<string, string>,
  options: EachOptions,
): Promise<{ messageId: string; unsent: Unsent[] }> {
  const addresses = [...new Set(recipientsOf(job.content).map((r) => r.email))];
  const message = (address: string) => messageFor(job, address, urls.get(address) as string);
  const [first, ...rest] = addresses;
  if (!first) throw new MailerError('no recipient left to send to', 'rejected', 'NoRecipient');
  const { messageId } = await mailer.send(message(first));
  const unsent: Unsent[] = [];
  for (const [i, address] of rest.entries()) {
    const slot = options.startAt + (i + 1) * options.spacingMs;
    let wait = Math.max(0, slot - options.now());
    for (let tries = 1; ; tries++) {
      if (!options.fits(wait)) {
        unsent.push({
          email: address,
          reason: `TimeLeft: too little of the invocation was left to hand its message to SES (${tries - 1} tries); it was not sent`,
        });
        break;
      }
      if (wait > 0) await options.sleep(wait);
      try {
        await mailer.send(message(address));
        break;
      } catch (error) {
        const reason = error instanceof MailerError ? `${error.code}: ${error.message}` : String(error);
        if (retriable(error) && tries < EACH_TRIES) {
          wait = EACH_BACKOFF_MS * 2 ** (tries - 1) + options.spacingMs;
          continue;
        }
        const unknown = !(error instanceof MailerError) || error.kind === 'unknown';
        unsent.push({
          email: address,
          reason: unknown
            ? `${reason}; SES may have taken it, so it is not sent again`
            : `${reason} (${tries} ${tries === 1 ? 'try' : 'tries'}); SES did not take it, and it was not sent`,
          ...(unknown ? { unknown } : {}),
        });
        break;
      }
    }
  }
  return { messageId, unsent };
}
