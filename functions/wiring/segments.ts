import { newSqsClient } from '../adapters/aws-clients.js';
import { DynamoAudienceCleanupStore } from '../adapters/dynamodb/audience-cleanup-store.js';
import { DynamoAudienceReads } from '../adapters/dynamodb/audience-reads.js';
import { contactListing } from '../adapters/dynamodb/contact-listing.js';
import { audienceReads, openTable, type Table } from '../adapters/dynamodb/repositories.js';
import { DynamoSegmentStore } from '../adapters/dynamodb/segment-store.js';
import { SqsAudienceCleanup } from '../adapters/sqs/audience-cleanup-queue.js';
import type { CleanupDeps } from '../contacts/cleanup.js';
import { log } from '../observability/logger.js';
import type { SegmentDeleteDeps, SegmentDeps, SegmentMemberDeps, SegmentMembers } from '../segments/ports.js';
import { loadConfig } from '../shared/config.js';
import { apiDeps } from '../wiring.js';

/**
 * The wiring of the segments functions (segments/routes.ts) and of the audience clean-up worker
 * (contacts/workers.ts): segments and memberships, the audience's reads, and where deletions hand
 * their clean-up (AUDIENCE_CLEANUP_QUEUE_URL).
 */
const segmentStore = (t: Table) => new DynamoSegmentStore(t.db, t.name);
/** A segment's members: the contacts' own listing of them (adapters/dynamodb/contact-listing.ts). */
const segmentMembers = (t: Table): SegmentMembers => {
  const listing = contactListing(t);
  return { members: (segmentId, page) => listing.segmentMembers(segmentId, page) };
};

type SegmentFunction =
  | 'create-segment'
  | 'list-segments'
  | 'get-segment'
  | 'update-segment'
  | 'create-audience'
  | 'list-audiences'
  | 'get-audience'
  | 'list-contact-segments'
  | 'add-contact-segment'
  | 'remove-contact-segment';

export function segmentDeps(name: SegmentFunction) {
  const { segments, audience, ...deps } = apiDeps(name, { segments: segmentStore, audience: audienceReads });
  return { ...deps, segments, audience } satisfies SegmentDeps & typeof deps;
}

/** A segment's contacts: the above, and the members' listing. */
export function segmentMemberDeps() {
  const deps = apiDeps('list-segment-contacts', {
    segments: segmentStore,
    audience: audienceReads,
    members: segmentMembers,
  });
  return deps satisfies SegmentMemberDeps;
}

/** A deletion: the above, and the clean-up queue. */
export function segmentDeleteDeps(name: 'delete-segment' | 'delete-audience') {
  const deps = apiDeps(name, { segments: segmentStore, audience: audienceReads });
  const { AUDIENCE_CLEANUP_QUEUE_URL } = loadConfig('AUDIENCE_CLEANUP_QUEUE_URL');
  return {
    ...deps,
    cleanup: new SqsAudienceCleanup(newSqsClient(), AUDIENCE_CLEANUP_QUEUE_URL),
  } satisfies SegmentDeleteDeps;
}

/** The clean-up worker: the table, and its own queue (a job too large for one run carries on there). */
export function cleanUpAudienceDeps() {
  const { TABLE_NAME, AUDIENCE_CLEANUP_QUEUE_URL } = loadConfig('TABLE_NAME', 'AUDIENCE_CLEANUP_QUEUE_URL');
  const table = openTable(TABLE_NAME);
  return {
    // The time index by the layout's name, the one its role is granted (TABLE_LAYOUT).
    store: new DynamoAudienceCleanupStore(table.db, table.name, table.layout.timeIndex),
    owners: new DynamoAudienceReads(table.db, table.name),
    cleanup: new SqsAudienceCleanup(newSqsClient(), AUDIENCE_CLEANUP_QUEUE_URL),
    log,
  } satisfies CleanupDeps & { log: unknown };
}
