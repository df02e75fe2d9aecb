import { checkProperties } from '../contact-properties/values.js';
import { conflict, notFound, validationError } from '../shared/errors.js';
import { newUuid } from '../shared/ids.js';
import { AGAIN, optimistically } from '../shared/optimistic.js';
import type { Clock, Counters, Log } from '../shared/ports.js';
import type { EventPublisher } from '../webhooks/ports.js';
import { publishQuietly } from '../webhooks/publish.js';
import type { AudienceCleanup } from './cleanup-jobs.js';
import { addressKey, type Contact } from './contact.js';
import { contactEvent } from './events.js';
import { type CreateContactInput, segmentIdsOf, topicChoicesOf } from './model.js';
import type { ContactListing, ContactPage, ContactPageQuery, ContactWrites } from './ports.js';
import type { AudienceReads } from './reads.js';
import type { UpdateContactInput } from './update-schema.js';

/**
 * The contacts' use cases: create (with its segments and topic choices, all or none), read by id
 * or address, change (an address change moves the contact), delete (its memberships and choices
 * go off the request path: AudienceCleanup), list (all, or one segment's members), and the same
 * seen through an audience (SDK 6.38's `audienceId` routes: a segment's members only).
 */
export interface ContactDeps {
  reads: AudienceReads;
  contacts: ContactWrites;
  listing: ContactListing;
  cleanup: AudienceCleanup;
  clock: Clock;
  /** Where contact.created, contact.updated and contact.deleted go (absent: none are raised). */
  events?: EventPublisher;
  log?: Log;
  counters?: Counters;
}

/** What a create or a change needs (no listing, no clean-up). */
export type ContactWriteDeps = Omit<ContactDeps, 'listing' | 'cleanup'>;

const contactNotFound = (idOrEmail: string) =>
  notFound(`Contact "${idOrEmail}" not found: give a contact's id or its email address.`);

const segmentNotFound = (id: string) => notFound(`Segment (audience) "${id}" not found.`);

/** Raises a contact event, with the contact's segments; a failure to publish never fails the change. */
async function raise(
  deps: ContactWriteDeps,
  type: 'contact.created' | 'contact.updated' | 'contact.deleted',
  contact: Contact,
  segmentIds?: readonly string[],
): Promise<void> {
  await publishQuietly(deps, type, async () => [
    contactEvent(
      type,
      deps.clock.now().toISOString(),
      contact,
      segmentIds ?? (await deps.reads.membershipsOf(contact.id)).map((m) => m.segment_id),
    ),
  ]);
}

/**
 * A new contact. An address that has a contact already (in any case) keeps its fields: the answer
 * names that contact, `created: false` (Resend answers success there too: resend/resend-node#494;
 * PATCH changes a contact), but the segments and topic choices given are written to it, so
 * SDK 6.38's `contacts.create({audienceId, email})` for a known address puts it in that audience
 * (its other choices are left as they are). Unknown segments, topics or properties are a 400
 * naming the first.
 */
export async function createContact(
  deps: ContactWriteDeps,
  input: CreateContactInput,
  /** The audience route's segment, joined beside those given. */
  audienceId?: string,
): Promise<{ contact: Contact; created: boolean }> {
  const segmentIds = [...new Set([...segmentIdsOf(input), ...(audienceId ? [audienceId] : [])])];
  const topics = topicChoicesOf(input);
  const [defined, segments, known] = await Promise.all([
    input.properties ? deps.reads.properties() : Promise.resolve([]),
    segmentIds.length ? deps.reads.segments(segmentIds) : Promise.resolve(new Map()),
    topics.length ? deps.reads.topics() : Promise.resolve([]),
  ]);
  if (audienceId && !segments.has(audienceId)) throw segmentNotFound(audienceId);
  const missing = segmentIds.find((id) => !segments.has(id));
  if (missing) {
    const message = `Segment "${missing}" does not exist: create it first (POST /v1/segments).`;
    throw validationError(message, [{ field: 'segments', message }]);
  }
  const topicIds = new Set(known.map((t) => t.id));
  const unknownTopic = topics.find((t) => !topicIds.has(t.id));
  if (unknownTopic) {
    const message = `Topic "${unknownTopic.id}" does not exist: create it first (POST /v1/topics).`;
    throw validationError(message, [{ field: 'topics', message }]);
  }
  const props = checkProperties(input.properties, defined);
  const now = deps.clock.now().toISOString();
  const contact: Contact = {
    id: newUuid(),
    email: input.email,
    first_name: input.first_name ?? null,
    last_name: input.last_name ?? null,
    unsubscribed: input.unsubscribed ?? false,
    props,
    created_at: now,
    updated_at: now,
  };
  if (!(await deps.contacts.create({ contact, segmentIds, topics }))) {
    const existing = await deps.reads.contactByAddress(input.email, true);
    // Deleted again since: the address is free, but this request's answer is the one it met.
    if (!existing) throw conflict(`The contact "${input.email}" was being changed; try again.`);
    await deps.contacts.join(existing.id, segmentIds, topics, now);
    return { contact: existing, created: false };
  }
  await raise(deps, 'contact.created', contact, segmentIds);
  return { contact, created: true };
}

/** The contact of an id or an address (404 when none). */
export async function findContact(deps: Pick<ContactDeps, 'reads'>, idOrEmail: string): Promise<Contact> {
  const contact = await deps.reads.contact(idOrEmail, true);
  if (!contact) throw contactNotFound(idOrEmail);
  return contact;
}

/**
 * The contact as an audience route sees it: the audience (a segment) must exist and the contact be
 * one of its members, else 404 (SDK 6.38 calls these routes when given `audienceId`).
 */
export async function findAudienceContact(
  deps: Pick<ContactDeps, 'reads'>,
  audienceId: string,
  idOrEmail: string,
): Promise<Contact> {
  const [segment, contact] = await Promise.all([
    deps.reads.segment(audienceId),
    deps.reads.contact(idOrEmail, true),
  ]);
  if (!segment) throw segmentNotFound(audienceId);
  if (!contact) throw contactNotFound(idOrEmail);
  const memberships = await deps.reads.membershipsOf(contact.id);
  if (!memberships.some((m) => m.segment_id === audienceId))
    throw notFound(`Contact "${idOrEmail}" is not in the audience "${audienceId}".`);
  return contact;
}

/** A time strictly after `before` (ISO): each write of a contact changes its `updated_at`, its version. */
const laterThan = (now: Date, before: string): string =>
  new Date(Math.max(now.getTime(), Date.parse(before) + 1)).toISOString();

/**
 * Changes what is given (`null` clears a name or a property's value); `email` moves the contact to
 * another address (409 when another contact has it). Optimistic: a write that meets another's
 * change reads again and applies this one to it.
 */
export async function updateContact(
  deps: ContactWriteDeps,
  idOrEmail: string,
  input: UpdateContactInput,
  audienceId?: string,
): Promise<Contact> {
  const defined = input.properties ? await deps.reads.properties() : [];
  const updated = await optimistically(`The contact "${idOrEmail}"`, async () => {
    const before = audienceId
      ? await findAudienceContact(deps, audienceId, idOrEmail)
      : await findContact(deps, idOrEmail);
    const after: Contact = {
      ...before,
      ...(input.email !== undefined ? { email: input.email } : {}),
      ...(input.first_name !== undefined ? { first_name: input.first_name } : {}),
      ...(input.last_name !== undefined ? { last_name: input.last_name } : {}),
      ...(input.unsubscribed !== undefined ? { unsubscribed: input.unsubscribed } : {}),
      props: checkProperties(input.properties, defined, before.props),
      updated_at: laterThan(deps.clock.now(), before.updated_at),
    };
    const outcome = await deps.contacts.update(before, after);
    if (outcome === 'changed') return AGAIN;
    if (outcome === 'taken')
      throw conflict(`Another contact has the address "${addressKey(after.email)}" already.`);
    return after;
  });
  await raise(deps, 'contact.updated', updated);
  return updated;
}

/**
 * Deletes the contact now (its item and its id item); its memberships and topic choices are
 * removed off the request path by the audience clean-up (a contact may be in many segments). No
 * other contact is touched.
 */
export async function deleteContact(
  deps: Omit<ContactDeps, 'listing'>,
  idOrEmail: string,
  audienceId?: string,
): Promise<Contact> {
  const contact = await optimistically(`The contact "${idOrEmail}"`, async () => {
    const found = audienceId
      ? await findAudienceContact(deps, audienceId, idOrEmail)
      : await findContact(deps, idOrEmail);
    // Queued before the delete: a queue that refuses fails the request with the contact still
    // there, so a retry finds it and queues again (a job is idempotent and waits 10 s, so the
    // event below still finds the contact's segments). Queued after, a refusal would leave a
    // deleted contact whose memberships and choices nothing removes.
    await deps.cleanup.enqueue({ kind: 'contact', contact_id: found.id });
    return (await deps.contacts.remove(found)) ? found : AGAIN;
  });
  await raise(deps, 'contact.deleted', contact);
  return contact;
}

/** A page of contacts, newest first; `segmentId`: that segment's members (404 when it does not exist). */
export async function listContacts(
  deps: Pick<ContactDeps, 'reads' | 'listing'>,
  page: ContactPageQuery,
  segmentId?: string,
): Promise<ContactPage> {
  if (segmentId === undefined) return deps.listing.contacts(page);
  if (!(await deps.reads.segment(segmentId))) throw segmentNotFound(segmentId);
  return deps.listing.segmentMembers(segmentId, page);
}
