import type { WorkerSpec } from '../shared/function-spec.js';

/** The contacts background functions (issue 40; shared/function-spec.ts). */
export const CONTACT_WORKERS = {
  // What a deleted contact, segment or topic leaves behind (contacts/cleanup.ts), from the audience
  // clean-up queue: a contact's partition (Query) or a segment's or topic's shards of the time and
  // status indexes (Query, keys only), deleted 25 to a BatchWriteItem; a job too large for one run
  // carries on in a message of its own on the same queue (SendMessage).
  'clean-up-audience': {
    description: 'Removes the memberships and topic choices of deleted contacts, segments and topics',
    env: ['TABLE_NAME', 'AUDIENCE_CLEANUP_QUEUE_URL'],
    // GetItem: the job's contact, segment or topic, read first (a job whose owner still stands keeps all).
    table: { actions: ['GetItem', 'Query', 'BatchWriteItem'], indexes: ['emailsByTime', 'emailsByStatus'] },
    audienceCleanupQueue: ['SendMessage'],
  },
} as const satisfies Record<string, WorkerSpec>;
