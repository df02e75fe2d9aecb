import { addressKey, type Contact, type Subscription, type Topic } from '../contacts/contact.js';
import { contactEvent, contactTopicsEvent } from '../contacts/events.js';
import type { AudienceReads } from '../contacts/reads.js';
import { newUuid } from '../shared/ids.js';
import type { Clock, Log } from '../shared/ports.js';
import type { EventPublisher } from '../webhooks/ports.js';
import { publishQuietly } from '../webhooks/publish.js';
import type { KeyRing } from './keys.js';
import type { UnsubscribeStore } from './ports.js';
import { tokenKeyId, type UnsubscribeClaim, verifyToken } from './token.js';

/**
 * The unsubscribe pages' rules (issue 40): what a link's token opens, what its page shows, and
 * what a one-click POST or the page's form changes. A GET only reads (link scanners fetch it); a
 * POST changes the contact at once. An address with no contact gets one, created opted out.
 */

export interface UnsubscribeDeps {
  keys: KeyRing;
  reads: AudienceReads;
  store: UnsubscribeStore;
  clock: Clock;
  events?: EventPublisher;
  log?: Log;
  /** Counts an opt-out as `unsubscribed` in the email metrics, under the email the link came in. */
  counted?: (emailId: string, at: string) => Promise<void>;
}

/** The token's claim, or undefined: malformed (refused before any read), altered, forged, or its key dropped. */
export async function openToken(deps: Pick<UnsubscribeDeps, 'keys'>, token: string) {
  const keyId = tokenKeyId(token);
  if (!keyId) return undefined;
  let keys = await deps.keys.keys();
  // A key made since the keys were read (a rotation): read them again, at most once a minute.
  if (!keys.keys.some((key) => key.id === keyId)) keys = await deps.keys.keys(true);
  return verifyToken(keys, token);
}

export interface TopicRow {
  readonly topic: Topic;
  readonly subscription: Subscription;
}

export interface Preferences {
  readonly address: string;
  readonly unsubscribed: boolean;
  /** Public topics, the private ones the contact is opted in to, and the link's own topic. */
  readonly topics: readonly TopicRow[];
  /** The link's topic when it still exists. */
  readonly linkTopic?: Topic;
}

/** The topics a contact may see and change on its page, with its subscription to each (its choice, else the topic's default). */
async function rows(deps: UnsubscribeDeps, claim: UnsubscribeClaim, contact: Contact | undefined) {
  const [topics, choices] = await Promise.all([
    deps.reads.topics(),
    contact ? deps.reads.choicesOf(contact.id) : Promise.resolve([]),
  ]);
  const chosen = new Map(choices.map((choice) => [choice.topic_id, choice.subscription]));
  return topics
    .map((topic) => ({ topic, subscription: chosen.get(topic.id) ?? topic.default_subscription }))
    .filter(
      ({ topic, subscription }) =>
        topic.visibility === 'public' || subscription === 'opt_in' || topic.id === claim.topicId,
    );
}

const linkTopicOf = (rows: readonly TopicRow[], claim: UnsubscribeClaim) =>
  rows.find((row) => row.topic.id === claim.topicId)?.topic;

/** What the page shows: reads only. */
export async function preferences(deps: UnsubscribeDeps, claim: UnsubscribeClaim): Promise<Preferences> {
  const contact = await deps.reads.contactByAddress(claim.address);
  const topics = await rows(deps, claim, contact);
  const linkTopic = linkTopicOf(topics, claim);
  return {
    address: contact?.email ?? claim.address,
    unsubscribed: contact?.unsubscribed ?? false,
    topics,
    ...(linkTopic ? { linkTopic } : {}),
  };
}

export interface Change {
  /** The global unsubscribe, when the change sets it. */
  readonly unsubscribed?: boolean;
  /** Topic choices by topic id (only the topics the page lists are taken). */
  readonly topics: ReadonlyMap<string, Subscription>;
}

/** RFC 8058's one-click POST: out of the link's topic, or of everything when the link has none. */
export const oneClickChange = (claim: UnsubscribeClaim): Change =>
  claim.topicId
    ? { topics: new Map([[claim.topicId, 'opt_out']]) }
    : { unsubscribed: true, topics: new Map() };

/**
 * Applies a change at once: the topic choices that differ from the contact's subscription are
 * written (each its own item) and raise contact.topics.updated; a changed global unsubscribe is
 * written and raises contact.updated. An address with no contact gets one (contact.created).
 * Each opt-out (a topic to opt_out, or the global unsubscribe set) counts once as `unsubscribed`.
 * Taking the same change again writes and raises nothing (a burst of one-click POSTs writes once).
 */
export async function applyChange(
  deps: UnsubscribeDeps,
  claim: UnsubscribeClaim,
  change: Change,
): Promise<Preferences> {
  const at = deps.clock.now().toISOString();
  for (let attempt = 0; ; attempt++) {
    const contact = await deps.reads.contactByAddress(claim.address, true);
    const listed = await rows(deps, claim, contact);
    const topics = [...change.topics]
      .map(([topicId, subscription]) => ({ row: listed.find((r) => r.topic.id === topicId), subscription }))
      .filter(({ row, subscription }) => row !== undefined && row.subscription !== subscription)
      .map(({ row, subscription }) => ({ topicId: (row as TopicRow).topic.id, subscription }));
    const globally =
      change.unsubscribed !== undefined && change.unsubscribed !== (contact?.unsubscribed ?? false);
    let optedOut = topics.some((choice) => choice.subscription === 'opt_out');
    // The page as the change leaves it, from what was read (no second read).
    const chosen = new Map(topics.map((choice) => [choice.topicId, choice.subscription]));
    const after: Preferences = {
      address: contact?.email ?? claim.address,
      unsubscribed: change.unsubscribed ?? contact?.unsubscribed ?? false,
      topics: listed.map((row) => ({ ...row, subscription: chosen.get(row.topic.id) ?? row.subscription })),
      ...(linkTopicOf(listed, claim) ? { linkTopic: linkTopicOf(listed, claim) } : {}),
    };
    if (!contact) {
      // No contact: an opt-out asked for is kept as an explicit choice even where the topic's
      // default is opt_out already, so the address gets its contact, created opted out (the
      // issue's rule), and a later default or an import cannot opt it back in.
      for (const [topicId, subscription] of change.topics)
        if (
          subscription === 'opt_out' &&
          listed.some((row) => row.topic.id === topicId) &&
          !topics.some((choice) => choice.topicId === topicId)
        )
          topics.push({ topicId, subscription });
      optedOut = topics.some((choice) => choice.subscription === 'opt_out');
      if (!topics.length && !globally) return after;
      const created: Contact = {
        id: newUuid(),
        email: addressKey(claim.address),
        first_name: null,
        last_name: null,
        unsubscribed: change.unsubscribed ?? false,
        props: {},
        created_at: at,
        updated_at: at,
      };
      if (!(await deps.store.createContact(created, topics))) {
        // Created meanwhile (another click, an import): apply the change to that contact.
        if (attempt < 2) continue;
        throw new Error('the contact of an unsubscribing address could not be read nor created');
      }
      await publishQuietly(deps, 'contact.created', () => [contactEvent('contact.created', at, created, [])]);
      if (change.unsubscribed) optedOut = true;
      if (topics.length) await raiseTopics(deps, at, created, topics);
    } else {
      const written = topics.length ? await deps.store.setChoices(contact, topics, at) : [];
      // Only what this request changed (a concurrent click on the same link may have written first).
      const changed = topics.filter((choice) => written.includes(choice.topicId));
      if (changed.length) await raiseTopics(deps, at, contact, changed);
      optedOut = changed.some((choice) => choice.subscription === 'opt_out');
      if (globally) {
        const updated = await deps.store.setUnsubscribed(contact, change.unsubscribed as boolean, at);
        if (!updated) {
          if (attempt < 2) continue;
          throw new Error('the contact changed under every attempt to unsubscribe it');
        }
        if (change.unsubscribed) optedOut = true;
        await publishQuietly(deps, 'contact.updated', async () => [
          contactEvent(
            'contact.updated',
            at,
            updated,
            (await deps.reads.membershipsOf(updated.id)).map((m) => m.segment_id),
          ),
        ]);
      }
    }
    if (optedOut && deps.counted) await deps.counted(claim.emailId, at);
    return after;
  }
}

const raiseTopics = (
  deps: UnsubscribeDeps,
  at: string,
  contact: Pick<Contact, 'id' | 'email'>,
  topics: readonly { topicId: string; subscription: Subscription }[],
) =>
  publishQuietly(deps, 'contact.topics.updated', () => [
    contactTopicsEvent(
      at,
      contact,
      topics.map(({ topicId, subscription }) => ({ id: topicId, subscription })),
    ),
  ]);

/** The page form's fields as a change: `topic.<id>` = opt_in | opt_out, and `unsubscribed` checked or not. */
export function formChange(form: URLSearchParams | FormData): Change {
  const topics = new Map<string, Subscription>();
  for (const [name, value] of form.entries())
    if (name.startsWith('topic.') && (value === 'opt_in' || value === 'opt_out'))
      topics.set(name.slice('topic.'.length), value);
  return { unsubscribed: form.get('unsubscribed') === 'on', topics };
}
