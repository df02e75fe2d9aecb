import type { AudienceCleanup } from '../contacts/cleanup-jobs.js';
import type { Contact, Membership, Segment } from '../contacts/contact.js';
import type { AudienceReads } from '../contacts/reads.js';
import type { PageQuery } from '../shared/list.js';
import type { Clock } from '../shared/ports.js';

/** A page of a list, newest first. */
export interface Page<T> {
  readonly data: T[];
  readonly has_more: boolean;
}

/** Where segments and their memberships are kept (adapters/dynamodb/segment-store.ts). */
export interface SegmentStore {
  create(segment: Segment): Promise<void>;
  /** Newest first (one partition). */
  list(page: PageQuery): Promise<Page<Segment>>;
  /** The segment renamed; undefined when there is none. */
  rename(id: string, name: string): Promise<Segment | undefined>;
  /** Removes the segment's own item and answers it; undefined when there was none. */
  delete(id: string): Promise<Segment | undefined>;
  /** Adds a membership; one already there is kept as it is (its `created_at`): answers it. */
  addMember(membership: Membership): Promise<Membership>;
  /** Removes a membership; false when there was none. */
  removeMember(contactId: string, segmentId: string): Promise<boolean>;
}

/** A segment's members, page by page, newest contact first (the contacts' listing: adapters/dynamodb/contact-listing.ts). */
export interface SegmentMembers {
  members(segmentId: string, page: PageQuery): Promise<Page<Contact>>;
}

export interface SegmentDeps {
  readonly segments: SegmentStore;
  readonly audience: AudienceReads;
  readonly clock: Clock;
}

export interface SegmentDeleteDeps extends SegmentDeps {
  readonly cleanup: AudienceCleanup;
}

export interface SegmentMemberDeps extends SegmentDeps {
  readonly members: SegmentMembers;
}
