/**
 * The segments' use cases: create, list, read, rename and delete a segment; a contact's segments,
 * adding and removing a contact; a segment's contacts. Deleting a segment removes its own item at
 * once and hands its memberships to the audience clean-up (contacts/cleanup.ts), off the request
 * path: a segment may hold a million, and deleting it deletes no contact.
 */
import type { Contact, Membership, Segment } from '../contacts/contact.js';
import { notFound } from '../shared/errors.js';
import { newUuid } from '../shared/ids.js';
import type { PageQuery } from '../shared/list.js';
import type { Page, SegmentDeleteDeps, SegmentDeps, SegmentMemberDeps } from './ports.js';

const noSegment = (id: string) => notFound(`Segment ${id} not found`);
const noContact = (idOrEmail: string) => notFound(`Contact ${idOrEmail} not found`);

export async function createSegment(deps: SegmentDeps, name: string): Promise<Segment> {
  const segment: Segment = { id: newUuid(), name, created_at: deps.clock.now().toISOString() };
  await deps.segments.create(segment);
  return segment;
}

export const listSegments = (deps: SegmentDeps, page: PageQuery): Promise<Page<Segment>> =>
  deps.segments.list(page);

export async function getSegment(deps: SegmentDeps, id: string): Promise<Segment> {
  const segment = await deps.audience.segment(id);
  if (!segment) throw noSegment(id);
  return segment;
}

export async function renameSegment(deps: SegmentDeps, id: string, name: string): Promise<Segment> {
  const segment = await deps.segments.rename(id, name);
  if (!segment) throw noSegment(id);
  return segment;
}

/**
 * Asks the clean-up to remove the segment's memberships, then removes the segment. In that order:
 * a queue that refuses fails the request with the segment still there, so a retry deletes it and
 * queues again; the other way, a refusal would leave a deleted segment (a retry: 404) whose
 * memberships nothing removes. A job is idempotent and waits 10 s before it runs; one for an id
 * that has no segment (then a 404) finds nothing to delete.
 */
export async function deleteSegment(deps: SegmentDeleteDeps, id: string): Promise<Segment> {
  await deps.cleanup.enqueue({ kind: 'segment', segment_id: id });
  const segment = await deps.segments.delete(id);
  if (!segment) throw noSegment(id);
  return segment;
}

async function contactOf(deps: SegmentDeps, idOrEmail: string): Promise<Contact> {
  const contact = await deps.audience.contact(idOrEmail, true);
  if (!contact) throw noContact(idOrEmail);
  return contact;
}

/** A segment of a contact: the segment, and when the contact was added to it. */
export interface ContactSegment {
  readonly segment: Segment;
  readonly membership: Membership;
}

/**
 * A contact's segments, a page of them, newest segment first (a contact is in a few segments at
 * most: one Query of its partition, then the segments; memberships of deleted segments left out).
 */
export async function contactSegments(
  deps: SegmentDeps,
  idOrEmail: string,
  page: PageQuery,
): Promise<Page<ContactSegment>> {
  const contact = await contactOf(deps, idOrEmail);
  const memberships = await deps.audience.membershipsOf(contact.id);
  const segments = await deps.audience.segments(memberships.map((m) => m.segment_id));
  const all = memberships
    .flatMap((membership) => {
      const segment = segments.get(membership.segment_id);
      return segment ? [{ segment, membership }] : [];
    })
    .sort((a, b) => (a.segment.id < b.segment.id ? 1 : -1));
  return pageOf(all, (entry) => entry.segment.id, page);
}

/** A page of a list already in memory, newest first by id, as the stored lists page. */
export function pageOf<T>(all: readonly T[], idOf: (item: T) => string, page: PageQuery): Page<T> {
  let from: T[];
  if (page.after !== undefined) {
    const after = page.after;
    from = all.filter((item) => idOf(item) < after);
  } else if (page.before !== undefined) {
    const before = page.before;
    const newer = all.filter((item) => idOf(item) > before);
    const data = newer.slice(Math.max(0, newer.length - page.limit));
    return { data, has_more: newer.length > page.limit };
  } else from = all.slice(page.offset);
  return { data: from.slice(0, page.limit), has_more: from.length > page.limit };
}

/** Adds the contact (by id or address) to the segment: 404 when either is missing. */
export async function addToSegment(
  deps: SegmentDeps,
  idOrEmail: string,
  segmentId: string,
): Promise<{ contact: Contact; membership: Membership }> {
  const [contact, segment] = await Promise.all([
    contactOf(deps, idOrEmail),
    deps.audience.segment(segmentId),
  ]);
  if (!segment) throw noSegment(segmentId);
  const membership = await deps.segments.addMember({
    contact_id: contact.id,
    segment_id: segment.id,
    created_at: deps.clock.now().toISOString(),
  });
  return { contact, membership };
}

/** Takes the contact out of the segment: 404 when the contact, or its membership, is missing. */
export async function removeFromSegment(
  deps: SegmentDeps,
  idOrEmail: string,
  segmentId: string,
): Promise<Contact> {
  const contact = await contactOf(deps, idOrEmail);
  if (!(await deps.segments.removeMember(contact.id, segmentId)))
    throw notFound(`Contact ${idOrEmail} is not in segment ${segmentId}`);
  return contact;
}

/** A segment's contacts, a page of them, newest first: 404 when the segment is missing. */
export async function segmentContacts(
  deps: SegmentMemberDeps,
  segmentId: string,
  page: PageQuery,
): Promise<Page<Contact>> {
  await getSegment(deps, segmentId);
  return deps.members.members(segmentId, page);
}
